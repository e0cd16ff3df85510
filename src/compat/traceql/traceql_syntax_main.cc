// traceql_syntax: for each line of standard input, a TraceQL query written
// as hexadecimal bytes (so that any byte, newlines included, fits on a
// line), prints one line: "ok", "unsupported <message>" (TraceQL strata
// does not answer) or "error <message>" (not TraceQL). The test that
// compares strata's parser with Grafana's grammar drives it
// (tests/compat/traceql_lezer.test.mjs).

#include <iostream>
#include <string>

#include "absl/strings/escaping.h"
#include "compat/traceql/parser.h"

int main() {
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line.size() % 2 != 0 ||
        line.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos) {
      std::cout << "error the line is not hexadecimal\n";
      continue;
    }
    const std::string query = absl::HexStringToBytes(line);
    const absl::StatusOr<strata::compat::traceql::Query> parsed =
        strata::compat::traceql::ParseTraceQL(query);
    if (parsed.ok()) {
      std::cout << "ok\n";
    } else if (absl::IsUnimplemented(parsed.status())) {
      std::cout << "unsupported " << parsed.status().message() << "\n";
    } else {
      std::cout << "error " << parsed.status().message() << "\n";
    }
  }
  return 0;
}
