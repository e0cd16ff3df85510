#pragma once

// `strata serve`: strata's main job. Today it validates and logs its
// effective configuration, then waits for SIGINT or SIGTERM and exits 0; the
// OTLP listeners, storage and API attach here as their issues land.
//
// Thread-safety: runs on the main thread; blocks SIGINT/SIGTERM in the
// calling thread before any other thread starts, so the signals are taken
// with sigwait() and not by a handler.

#include <string>

#include "absl/status/status.h"

namespace strata::cli {

struct ServeOptions {
  std::string data_dir = "strata-data";
  std::string otlp_grpc_address = "0.0.0.0:4317";
  std::string otlp_http_address = "0.0.0.0:4318";
  std::string api_address = "0.0.0.0:7520";
};

// Checks the options; InvalidArgument names the bad one.
[[nodiscard]] absl::Status ValidateServeOptions(const ServeOptions& options);

// Runs the server until SIGINT or SIGTERM. Returns the process exit code.
int RunServe(const ServeOptions& options);

}  // namespace strata::cli
