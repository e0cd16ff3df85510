// logql_syntax: for each line of standard input, a LogQL query written as
// a JSON string (so that any text, newlines included, fits on a line),
// prints one line: "ok", "unsupported <message>" (LogQL that strata's
// checks refuse, as Loki would: still LogQL) or "error <message>" (not
// LogQL). tests/compat/logql_lezer.test.mjs drives it to compare strata's
// parser with Grafana's grammar.

#include <iostream>
#include <string>
#include <string_view>

#include "compat/logql/check.h"
#include "compat/logql/parser.h"
#include "simdjson.h"

int main() {
  simdjson::dom::parser json;
  std::string line;
  while (std::getline(std::cin, line)) {
    std::string_view query;
    simdjson::dom::element element;
    if (json.parse(line).get(element) != simdjson::SUCCESS ||
        element.get_string().get(query) != simdjson::SUCCESS) {
      std::cout << "error the line is not a JSON string\n";
      continue;
    }
    const auto parsed = strata::compat::logql::ParseLogQL(query);
    if (!parsed.ok()) {
      std::cout << "error " << parsed.status().message() << "\n";
      continue;
    }
    const absl::Status checked = strata::compat::logql::CheckLogQL(**parsed);
    if (checked.ok()) {
      std::cout << "ok\n";
    } else {
      std::cout << "unsupported " << checked.message() << "\n";
    }
  }
  return 0;
}
