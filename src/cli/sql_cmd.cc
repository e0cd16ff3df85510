#include "cli/sql_cmd.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "cli/flags.h"
#include "fmt/format.h"
#include "server/http_adapter.h"
#include "simdjson.h"

namespace strata::cli {
namespace {

constexpr size_t kMaxCellChars = 60;

// A cell as printed: JSON strings unquoted, null empty, numbers and
// booleans as written, nested values as JSON. Long cells are cut.
std::string CellText(simdjson::dom::element value) {
  std::string text;
  switch (value.type()) {
    case simdjson::dom::element_type::NULL_VALUE:
      text = "NULL";
      break;
    case simdjson::dom::element_type::STRING:
      text = std::string(std::string_view(value.get_string()));
      break;
    default:
      text = simdjson::minify(value);
  }
  for (char& c : text) {
    if (c == '\n' || c == '\t' || c == '\r') c = ' ';
  }
  if (text.size() > kMaxCellChars) text = text.substr(0, kMaxCellChars - 3) + "...";
  return text;
}

// Runs one statement; prints its table (or JSON). False when it failed.
bool RunStatement(const SqlOptions& options, const std::string& sql) {
  server::HttpRequest request;
  request.method = "POST";
  request.target = fmt::format("/api/v1/sql?limit={}", options.limit);
  request.headers = {{"Content-Type", "text/plain; charset=utf-8"},
                     {"Authorization", "Bearer " + options.token}};
  request.body = std::make_shared<std::string>(sql);
  absl::StatusOr<server::HttpResponse> response = server::HttpCall(
      options.api_address, request, std::chrono::seconds(std::max(1, options.timeout_sec)));
  if (!response.ok()) {
    fmt::print(stderr, "strata sql: {}\n", std::string(response.status().message()));
    return false;
  }
  if (response->status != 200) {
    simdjson::dom::parser parser;
    std::string_view message = response->body;
    simdjson::dom::element doc;
    if (parser.parse(response->body).get(doc) == simdjson::SUCCESS) {
      (void)doc["error"].get_string().get(message);
    }
    fmt::print(stderr, "strata sql: HTTP {}: {}\n", response->status, message);
    return false;
  }
  if (options.json) {
    fmt::print("{}\n", response->body);
    return true;
  }
  std::string error;
  const std::string table = FormatSqlTable(response->body, &error);
  if (!error.empty()) {
    fmt::print(stderr, "strata sql: unexpected answer: {}\n", error);
    return false;
  }
  fmt::print("{}", table);
  return true;
}

// Where a SQL scanner is: in code, or inside something a ';' does not end.
enum class SqlState {
  kCode,
  kQuoted,
  kEscapedQuoted,
  kIdentifier,
  kDollar,
  kLineComment,
  kBlockComment
};

bool IsWordChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }

// True when `text` holds something other than white space and comments.
bool HasCode(std::string_view text) {
  std::vector<std::string> statements;
  return !SplitSqlStatements(std::string(text) + ";", &statements).empty() || !statements.empty();
}

// Statements from `in`, each sent on its own as SplitSqlStatements cuts
// them; an unfinished one at the end of the input is sent too.
bool RunStream(const SqlOptions& options, std::istream& in, bool interactive) {
  bool ok = true;
  std::string pending, line;
  for (;;) {
    if (interactive) std::fputs(HasCode(pending) ? "   ...> " : "strata> ", stdout);
    std::fflush(stdout);
    if (!std::getline(in, line)) break;
    if (!HasCode(pending) && (line == "\\q" || line == "quit" || line == "exit")) break;
    pending += line;
    pending += '\n';
    std::vector<std::string> statements;
    pending = SplitSqlStatements(pending, &statements);
    for (const std::string& statement : statements) ok = RunStatement(options, statement) && ok;
  }
  if (HasCode(pending)) ok = RunStatement(options, pending) && ok;
  return ok;
}

}  // namespace

std::string SplitSqlStatements(std::string_view text, std::vector<std::string>* statements) {
  SqlState state = SqlState::kCode;
  int comment_depth = 0;
  std::string_view dollar_tag;
  size_t start = 0;
  bool code = false;  // the current statement holds more than comments
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    const char next = i + 1 < text.size() ? text[i + 1] : '\0';
    switch (state) {
      case SqlState::kCode:
        if (c == '-' && next == '-') {
          state = SqlState::kLineComment;
          ++i;
        } else if (c == '/' && next == '*') {
          state = SqlState::kBlockComment;
          comment_depth = 1;
          ++i;
        } else if (c == ';') {
          if (code) statements->emplace_back(text.substr(start, i + 1 - start));
          start = i + 1;
          code = false;
        } else if (!std::isspace(static_cast<unsigned char>(c))) {
          code = true;
          if (c == '\'') {
            const bool escaped = i > 0 && (text[i - 1] == 'e' || text[i - 1] == 'E') &&
                                 (i < 2 || !IsWordChar(text[i - 2]));
            state = escaped ? SqlState::kEscapedQuoted : SqlState::kQuoted;
          } else if (c == '"') {
            state = SqlState::kIdentifier;
          } else if (c == '$' && (i == 0 || !IsWordChar(text[i - 1]))) {
            size_t end = i + 1;
            while (end < text.size() && IsWordChar(text[end])) ++end;
            const bool tag_ok =
                end == i + 1 || !std::isdigit(static_cast<unsigned char>(text[i + 1]));
            if (end < text.size() && text[end] == '$' && tag_ok) {
              dollar_tag = text.substr(i, end + 1 - i);
              state = SqlState::kDollar;
              i = end;
            }
          }
        }
        break;
      case SqlState::kQuoted:
        if (c == '\'') {
          if (next == '\'') {
            ++i;
          } else {
            state = SqlState::kCode;
          }
        }
        break;
      case SqlState::kEscapedQuoted:
        if (c == '\\') {
          ++i;
        } else if (c == '\'') {
          if (next == '\'') {
            ++i;
          } else {
            state = SqlState::kCode;
          }
        }
        break;
      case SqlState::kIdentifier:
        if (c == '"') {
          if (next == '"') {
            ++i;
          } else {
            state = SqlState::kCode;
          }
        }
        break;
      case SqlState::kDollar:
        if (c == '$' && text.substr(i).starts_with(dollar_tag)) {
          i += dollar_tag.size() - 1;
          state = SqlState::kCode;
        }
        break;
      case SqlState::kLineComment:
        if (c == '\n') state = SqlState::kCode;
        break;
      case SqlState::kBlockComment:
        if (c == '/' && next == '*') {
          ++comment_depth;
          ++i;
        } else if (c == '*' && next == '/') {
          ++i;
          if (--comment_depth == 0) state = SqlState::kCode;
        }
        break;
    }
  }
  return std::string(text.substr(std::min(start, text.size())));
}

std::string FormatSqlTable(std::string_view json, std::string* error) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  simdjson::dom::array columns, rows;
  if (parser.parse(json.data(), json.size()).get(doc) != simdjson::SUCCESS ||
      doc["columns"].get_array().get(columns) != simdjson::SUCCESS ||
      doc["rows"].get_array().get(rows) != simdjson::SUCCESS) {
    *error = "not a SQL result (columns and rows)";
    return "";
  }
  std::vector<std::vector<std::string>> cells(1);
  for (simdjson::dom::element column : columns) {
    std::string_view name;
    if (column["name"].get_string().get(name) != simdjson::SUCCESS) {
      *error = "a column without a name";
      return "";
    }
    cells[0].emplace_back(name);
  }
  const size_t width_count = cells[0].size();
  for (simdjson::dom::element row : rows) {
    simdjson::dom::array values;
    if (row.get_array().get(values) != simdjson::SUCCESS || values.size() != width_count) {
      *error = "a row that does not match the columns";
      return "";
    }
    auto& out = cells.emplace_back();
    for (simdjson::dom::element value : values) out.push_back(CellText(value));
  }
  std::vector<size_t> widths(width_count, 0);
  for (const auto& row : cells) {
    for (size_t c = 0; c < width_count; ++c) widths[c] = std::max(widths[c], row[c].size());
  }
  std::string text;
  auto append_row = [&](const std::vector<std::string>& row) {
    for (size_t c = 0; c < width_count; ++c) {
      if (c > 0) text += " | ";
      text += fmt::format("{:<{}}", row[c], widths[c]);
    }
    text.erase(text.find_last_not_of(' ') + 1);
    text += '\n';
  };
  append_row(cells[0]);
  for (size_t c = 0; c < width_count; ++c) {
    if (c > 0) text += "-+-";
    text += std::string(widths[c], '-');
  }
  text += '\n';
  for (size_t r = 1; r < cells.size(); ++r) append_row(cells[r]);
  bool truncated = false;
  (void)doc["truncated"].get_bool().get(truncated);
  std::string_view reason = "more rows exist: raise --limit";
  (void)doc["truncated_reason"].get_string().get(reason);
  text += fmt::format("({} row{}{})\n", cells.size() - 1, cells.size() == 2 ? "" : "s",
                      truncated ? fmt::format("; {}", reason) : "");
  return text;
}

int RunSql(const SqlOptions& options) {
  if (!options.command.empty()) {
    std::istringstream command(options.command);
    return RunStream(options, command, /*interactive=*/false) ? 0 : 1;
  }
  return RunStream(options, std::cin, ::isatty(STDIN_FILENO) != 0) ? 0 : 1;
}

Command RegisterSql(CLI::App* app, std::set<std::string>* env_names) {
  auto options = std::make_shared<SqlOptions>();
  CLI::App* command =
      app->add_subcommand("sql", "Read-only SQL over spans, logs and metrics of a running server");
  AddFlag(command, env_names, "api-address", &options->api_address, "The server's API address");
  AddFlag(command, env_names, "token", &options->token, "A token with read scope");
  AddOption(command, "-c,--command", &options->command,
            "Run these statements (split at ';' as on standard input) and exit");
  AddOption(command, "--limit", &options->limit, "Most rows shown per statement")
      ->capture_default_str();
  AddOption(command, "--timeout-sec", &options->timeout_sec, "How long to wait for an answer")
      ->capture_default_str();
  command->add_flag("--json", options->json, "Print the API's JSON instead of a table");
  return Command{command, [options] { return RunSql(*options); }};
}

}  // namespace strata::cli
