#pragma once

// Which spans of one trace hold a text (GET /api/v1/traces/{trace_id}/spans
// ?q=, docs/api.md): the trace page's span search looks in names, services
// and ids itself (the compact form has them) and asks this for what the
// compact form leaves out. A span holds the text when its name, its status
// message, an attribute's key or value, an event's name or an event's or a
// link's attribute key or value contains it, ignoring ASCII case. A value
// is searched as its text: a string as it is, an int, a double or a bool
// as the UI shows it (`12`, `0.25`, `true`), every element of an array and
// every key and value of a kvlist, at any depth; bytes are not searched.
//
// Thread-safety: reentrant.

#include <cstddef>
#include <string_view>
#include <vector>

#include "otlp/batch.h"

namespace strata::api {

// The longest text searched for.
inline constexpr size_t kSpanTextMaxBytes = 256;

// The rows of `batch.spans` that hold `text` (not empty), in row order.
std::vector<size_t> SpansHoldingText(const otlp::TraceBatch& batch, std::string_view text);

}  // namespace strata::api
