#include "api/log_tail_metrics.h"

#include <cstdint>
#include <iterator>

#include "fmt/format.h"

namespace strata::api {
namespace {

// One metric with a sample per API.
void Metric(std::string* out, std::string_view name, std::string_view type, std::string_view help,
            uint64_t strata, uint64_t loki) {
  fmt::format_to(std::back_inserter(*out),
                 "# HELP {0} {1}\n# TYPE {0} {2}\n{0}{{api=\"strata\"}} {3}\n"
                 "{0}{{api=\"loki\"}} {4}\n",
                 name, help, type, strata, loki);
}

uint64_t NonNegative(int64_t value) { return value < 0 ? 0 : static_cast<uint64_t>(value); }

}  // namespace

std::string LogTailMetricsText(const LogTailStats& stats) {
  std::string out;
  // The totals include the formatted (Loki) tails; the differences are
  // the plain ones.
  Metric(&out, "strata_log_tails", "gauge", "Live log tails open.",
         NonNegative(stats.streams - stats.formatted_streams),
         NonNegative(stats.formatted_streams));
  Metric(&out, "strata_log_tail_records_sent_total", "counter",
         "Log records live tails handed to their connections (a Loki tail's replay included).",
         stats.records_sent - stats.formatted_records_sent, stats.formatted_records_sent);
  Metric(&out, "strata_log_tail_records_dropped_total", "counter",
         "Matching log records live tails did not send because the client read too slowly.",
         stats.records_missed - stats.formatted_records_dropped, stats.formatted_records_dropped);
  return out;
}

}  // namespace strata::api
