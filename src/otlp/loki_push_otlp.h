#pragma once

// A decoded Loki push (loki_push.h) as an OTLP/JSON ExportLogsServiceRequest,
// so it takes the OTLP logs ingest path unchanged (decoder, row limits,
// durable group commit). The reverse of the mapping docs/loki.md gives for
// queries:
//
//  * each stream is one resource: a label that is one of the default
//    resource attributes' sanitized names (service_name, k8s_pod_name, ...)
//    gets its dotted name back (service.name, k8s.pod.name); any other
//    label stays a resource attribute under its own name;
//  * each entry is one log record: the line its string body, the
//    timestamp its time_unix_nano;
//  * structured metadata: trace_id (32 hex digits) and span_id (16) become
//    the record's ids; severity_text, severity or level its severity text,
//    detected_level too when none of those is given; severity_number
//    (1..24) its severity number, else the number of the level word
//    (trace 1, debug 5, info 9, warn 13, error 17, fatal 21); every other
//    pair (and an id that is not valid hex) a string record attribute.
//
// Errors: InvalidArgument for a negative timestamp.
//
// Thread-safety: reentrant.

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "otlp/loki_push.h"

namespace strata::otlp {

// The dotted resource attribute name for stream label `label`: the default
// resource attribute whose sanitized name it is, else `label` itself.
std::string_view ResourceAttributeForLokiLabel(std::string_view label);

[[nodiscard]] absl::StatusOr<std::string> LokiPushToOtlpLogsJson(const LokiPush& push);

}  // namespace strata::otlp
