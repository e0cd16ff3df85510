// promql_syntax: for each line of standard input, a PromQL expression
// written as hexadecimal bytes (so that any byte, newlines included, fits
// on a line), prints one line: "ok" or "error <message>". The test that
// compares strata's parser with Prometheus's grammar drives it
// (tests/compat/promql_lezer.test.mjs).

#include <iostream>
#include <string>

#include "absl/strings/escaping.h"
#include "compat/promql/parser.h"

int main() {
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line.size() % 2 != 0 ||
        line.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos) {
      std::cout << "error the line is not hexadecimal\n";
      continue;
    }
    const std::string query = absl::HexStringToBytes(line);
    const auto parsed = strata::compat::promql::ParsePromQL(query);
    if (parsed.ok()) {
      std::cout << "ok\n";
    } else {
      std::string message(parsed.status().message());
      for (char& c : message) {
        if (c == '\n') c = ' ';
      }
      std::cout << "error " << message << "\n";
    }
  }
  return 0;
}
