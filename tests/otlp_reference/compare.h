#pragma once

// MessageDifferences() compares two messages with libprotobuf's
// MessageDifferencer and returns its report of the differences, empty when
// the messages are equal.
//
// Doubles compare by bit pattern, except that any NaN equals any NaN: -0.0
// differs from 0.0 (OTLP keeps the sign), while a NaN's payload is not
// something OTLP/JSON can carry. Everything else, including unknown fields,
// compares as MessageDifferencer::Equals does.
//
// Thread-safety: reentrant. Errors: none.

#include <string>

#include "google/protobuf/message.h"

namespace strata::otlp_reference {

std::string MessageDifferences(const google::protobuf::Message& expected,
                               const google::protobuf::Message& actual);

}  // namespace strata::otlp_reference
