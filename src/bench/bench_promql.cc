#include "bench/bench_promql.h"

#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "api/prometheus_query.h"
#include "api/prometheus_series.h"
#include "bench/bench_common.h"
#include "common/status_macros.h"
#include "fmt/format.h"
#include "otlp/decode.h"
#include "query/view_files.h"

namespace strata::bench {
namespace {

constexpr int kServices = 20;
constexpr int kRoutes = 4;
constexpr int64_t kStepSeconds = 15;
constexpr double kBounds[] = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5};
constexpr int kBuckets = static_cast<int>(std::size(kBounds)) + 1;
// Points per step: a histogram and a counter per service and route, a gauge
// per service.
constexpr int kPointsPerStep = 2 * kServices * kRoutes + kServices;

constexpr char kRateQuery[] = "sum by (job) (rate(http_server_request_duration_seconds_count[5m]))";
constexpr char kQuantileQuery[] =
    "histogram_quantile(0.99, sum by (le, job) "
    "(rate(http_server_request_duration_seconds_bucket[5m])))";

// The model: every series' values at every step.
struct Model {
  int64_t start_s = 0;
  int steps = 0;
  // [series][step][bucket] cumulative counts; series = service * kRoutes + route.
  std::vector<std::vector<std::array<uint64_t, kBuckets>>> buckets;
  std::vector<std::vector<double>> sums;
  std::vector<std::vector<uint64_t>> requests;  // the counters
  std::vector<std::vector<double>> memory;      // the gauges, per service
};

Model BuildModel(int64_t start_s, int steps) {
  Model m;
  m.start_s = start_s;
  m.steps = steps;
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> unit(0, 1);
  m.buckets.resize(kServices * kRoutes);
  m.sums.resize(kServices * kRoutes);
  m.requests.resize(kServices * kRoutes);
  for (int s = 0; s < kServices * kRoutes; ++s) {
    std::array<uint64_t, kBuckets> counts{};
    double sum = 0;
    uint64_t total = 0;
    for (int i = 0; i < steps; ++i) {
      const int n = static_cast<int>(unit(rng) * 20);
      for (int k = 0; k < n; ++k) {
        const double seconds = std::exp(unit(rng) * 8 - 6);
        sum += seconds;
        int b = 0;
        while (b < kBuckets - 1 && seconds > kBounds[b]) ++b;
        ++counts[b];
      }
      total += static_cast<uint64_t>(unit(rng) * 50);
      m.buckets[s].push_back(counts);
      m.sums[s].push_back(sum);
      m.requests[s].push_back(total);
    }
  }
  m.memory.resize(kServices);
  for (int s = 0; s < kServices; ++s) {
    double v = 1e8;
    for (int i = 0; i < steps; ++i) m.memory[s].push_back(v += std::round((unit(rng) - 0.5) * 1e6));
  }
  return m;
}

std::string Service(int s) { return fmt::format("svc-{:02}", s); }

uint64_t Count(const std::array<uint64_t, kBuckets>& counts) {
  uint64_t total = 0;
  for (uint64_t c : counts) total += c;
  return total;
}

// One OTLP/JSON export request with steps [from, to).
std::string OtlpJson(const Model& m, int from, int to) {
  std::string out = R"({"resourceMetrics":[)";
  for (int s = 0; s < kServices; ++s) {
    auto time = [&](int i) { return (m.start_s + i * kStepSeconds) * 1'000'000'000; };
    fmt::format_to(
        std::back_inserter(out),
        R"({}{{"resource":{{"attributes":[{{"key":"service.name","value":{{"stringValue":"{}"}}}},)"
        R"({{"key":"service.instance.id","value":{{"stringValue":"i-{}"}}}}]}},)"
        R"("scopeMetrics":[{{"scope":{{"name":"bench"}},"metrics":[)",
        s == 0 ? "" : ",", Service(s), s);
    // The histogram.
    out +=
        R"({"name":"http.server.request.duration","unit":"s","histogram":{"aggregationTemporality":2,"dataPoints":[)";
    bool first = true;
    for (int r = 0; r < kRoutes; ++r) {
      const int series = s * kRoutes + r;
      for (int i = from; i < to; ++i) {
        const auto& counts = m.buckets[series][i];
        fmt::format_to(
            std::back_inserter(out),
            R"({}{{"startTimeUnixNano":"{}","timeUnixNano":"{}","count":"{}","sum":{},"bucketCounts":[)",
            first ? "" : ",", time(0), time(i), Count(counts), m.sums[series][i]);
        first = false;
        for (int b = 0; b < kBuckets; ++b) {
          fmt::format_to(std::back_inserter(out), R"({}"{}")", b == 0 ? "" : ",", counts[b]);
        }
        out += R"(],"explicitBounds":[0.005,0.01,0.025,0.05,0.1,0.25,0.5,1,2.5],)";
        fmt::format_to(
            std::back_inserter(out),
            R"("attributes":[{{"key":"http.route","value":{{"stringValue":"/r{}"}}}}]}})", r);
      }
    }
    out += "]}},";
    // The counter.
    out +=
        R"({"name":"http.server.requests","unit":"{request}","sum":{"aggregationTemporality":2,"isMonotonic":true,"dataPoints":[)";
    first = true;
    for (int r = 0; r < kRoutes; ++r) {
      for (int i = from; i < to; ++i) {
        fmt::format_to(
            std::back_inserter(out),
            R"({}{{"startTimeUnixNano":"{}","timeUnixNano":"{}","asInt":"{}",)"
            R"("attributes":[{{"key":"http.route","value":{{"stringValue":"/r{}"}}}}]}})",
            first ? "" : ",", time(0), time(i), m.requests[s * kRoutes + r][i], r);
        first = false;
      }
    }
    out += "]}},";
    // The gauge.
    out += R"({"name":"process.memory.usage","unit":"By","gauge":{"dataPoints":[)";
    for (int i = from; i < to; ++i) {
      fmt::format_to(std::back_inserter(out), R"({}{{"timeUnixNano":"{}","asDouble":{}}})",
                     i == from ? "" : ",", time(i), m.memory[s][i]);
    }
    out += "]}}]}]}";
  }
  out += "]}";
  return out;
}

// The same samples as OpenMetrics, with the specification's names.
absl::StatusOr<uint64_t> WriteOpenMetrics(const Model& m, const std::string& path) {
  std::ofstream out(path);
  if (!out) return absl::InternalError(absl::StrCat("cannot write ", path));
  uint64_t samples = 0;
  std::string line;
  auto emit = [&](std::string_view name, const std::string& labels, auto value, int i) {
    line.clear();
    fmt::format_to(std::back_inserter(line), "{}{{{}}} {} {}\n", name, labels, value,
                   m.start_s + i * kStepSeconds);
    out << line;
    ++samples;
  };
  out << "# TYPE http_server_request_duration_seconds histogram\n";
  for (int s = 0; s < kServices; ++s) {
    for (int r = 0; r < kRoutes; ++r) {
      const int series = s * kRoutes + r;
      const std::string base =
          fmt::format("http_route=\"/r{}\",instance=\"i-{}\",job=\"{}\"", r, s, Service(s));
      for (int b = 0; b < kBuckets; ++b) {
        const std::string labels =
            fmt::format("{},le=\"{}\"", base,
                        b < kBuckets - 1 ? fmt::format("{}", kBounds[b]) : std::string("+Inf"));
        for (int i = 0; i < m.steps; ++i) {
          uint64_t cumulative = 0;
          for (int k = 0; k <= b; ++k) cumulative += m.buckets[series][i][k];
          emit("http_server_request_duration_seconds_bucket", labels, cumulative, i);
        }
      }
      for (int i = 0; i < m.steps; ++i) {
        emit("http_server_request_duration_seconds_sum", base, m.sums[series][i], i);
      }
      for (int i = 0; i < m.steps; ++i) {
        emit("http_server_request_duration_seconds_count", base, Count(m.buckets[series][i]), i);
      }
    }
  }
  out << "# TYPE http_server_requests counter\n";
  for (int s = 0; s < kServices; ++s) {
    for (int r = 0; r < kRoutes; ++r) {
      const std::string labels =
          fmt::format("http_route=\"/r{}\",instance=\"i-{}\",job=\"{}\"", r, s, Service(s));
      for (int i = 0; i < m.steps; ++i) {
        emit("http_server_requests_total", labels, m.requests[s * kRoutes + r][i], i);
      }
    }
  }
  out << "# TYPE process_memory_usage_bytes gauge\n";
  for (int s = 0; s < kServices; ++s) {
    const std::string labels = fmt::format("instance=\"i-{}\",job=\"{}\"", s, Service(s));
    for (int i = 0; i < m.steps; ++i) emit("process_memory_usage_bytes", labels, m.memory[s][i], i);
  }
  out << "# EOF\n";
  out.close();
  if (!out) return absl::InternalError(absl::StrCat("cannot write ", path));
  return samples;
}

// The output of a shell command, or an error naming it.
absl::StatusOr<std::string> Run(const std::string& command) {
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return absl::InternalError(absl::StrCat("cannot run: ", command));
  std::string out;
  char buffer[65536];
  size_t n;
  while ((n = fread(buffer, 1, sizeof(buffer), pipe)) > 0) out.append(buffer, n);
  const int status = pclose(pipe);
  if (status != 0) {
    return absl::InternalError(absl::StrCat("failed (", status, "): ", command, "\n", out));
  }
  return out;
}

// A loopback port nobody listens on now.
absl::StatusOr<int> FreeLoopbackPort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return absl::InternalError("socket failed");
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t size = sizeof(address);
  const bool ok = bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0 &&
                  getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size) == 0;
  close(fd);
  if (!ok) return absl::InternalError("cannot find a free loopback port");
  return ntohs(address.sin_port);
}

// A throwaway Prometheus over `tsdb` on a free loopback port.
class Prometheus {
 public:
  ~Prometheus() {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      waitpid(pid_, nullptr, 0);
    }
  }
  absl::Status Start(const std::string& scratch, const std::string& tsdb) {
    STRATA_ASSIGN_OR_RETURN(const int port, FreeLoopbackPort());
    url_ = fmt::format("http://127.0.0.1:{}", port);
    const std::string config = scratch + "/prometheus.yml";
    std::ofstream(config) << "global: {}\n";
    const std::string args[] = {"prometheus",
                                "--config.file=" + config,
                                "--storage.tsdb.path=" + tsdb,
                                "--storage.tsdb.retention.time=100y",
                                fmt::format("--web.listen-address=127.0.0.1:{}", port),
                                "--log.level=error"};
    // The child's freopen would otherwise write our unflushed output again.
    std::fflush(nullptr);
    pid_ = fork();
    if (pid_ < 0) return absl::InternalError("fork failed");
    if (pid_ == 0) {
      std::vector<char*> argv;
      for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
      argv.push_back(nullptr);
      freopen("/dev/null", "w", stdout);
      freopen("/dev/null", "w", stderr);
      execvp("prometheus", argv.data());
      _exit(127);
    }
    const auto until = BenchClock::now() + std::chrono::seconds(120);
    while (BenchClock::now() < until) {
      if (Run(fmt::format("curl -sf {}/-/ready >/dev/null 2>&1", url_)).ok()) {
        return absl::OkStatus();
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    return absl::DeadlineExceededError("prometheus did not become ready in 120 s");
  }
  // Prometheus's own execTotalTime of a range query, and its result count.
  absl::StatusOr<std::pair<double, size_t>> Time(const std::string& query, int64_t start,
                                                 int64_t end, int64_t step) {
    STRATA_ASSIGN_OR_RETURN(
        const std::string body,
        Run(fmt::format("curl -sf --data-urlencode 'query={}' -d start={} -d end={} -d step={} "
                        "-d stats=all {}/api/v1/query_range",
                        query, start, end, step, url_)));
    const size_t at = body.find("\"execTotalTime\":");
    if (at == std::string::npos) {
      return absl::InternalError(absl::StrCat("no execTotalTime in ", body.substr(0, 300)));
    }
    const double seconds = std::strtod(body.c_str() + at + 16, nullptr);
    size_t series = 0;
    for (size_t p = body.find("\"metric\":"); p != std::string::npos;
         p = body.find("\"metric\":", p + 1)) {
      ++series;
    }
    return std::pair{seconds, series};
  }
  // The body of GET `path` with `args` (curl -G arguments, URL-encoded).
  absl::StatusOr<std::string> Get(const std::string& path, const std::string& args) {
    return Run(fmt::format("curl -sf -G {} {}{}", args, url_, path));
  }

 private:
  pid_t pid_ = -1;
  std::string url_;
};

// The answer's `"data":[...]` for a list of strings, as Prometheus writes
// it (compact, no escapes needed for these names).
std::string DataArrayJson(const std::vector<std::string>& strings) {
  std::string out = "\"data\":[";
  for (size_t i = 0; i < strings.size(); ++i) {
    out.append(i == 0 ? "\"" : ",\"").append(strings[i]).append("\"");
  }
  return out + "]";
}

// Prometheus over [start_s, end_s] must answer what strata's listings did:
// the same series count for kPromSeriesMetric, the same label names, and
// the same metric names but target_info (strata's resources; Prometheus
// got none).
absl::Status CheckListings(Prometheus& prometheus, const PromLabelsBenchNumbers& ours,
                           int64_t start_s, int64_t end_s) {
  const std::string window = fmt::format("-d start={} -d end={}", start_s, end_s);
  STRATA_ASSIGN_OR_RETURN(
      const std::string series,
      prometheus.Get("/api/v1/series",
                     fmt::format("--data-urlencode 'match[]={}' {}", kPromSeriesMetric, window)));
  size_t their_series = 0;
  for (size_t p = series.find("\"__name__\":"); p != std::string::npos;
       p = series.find("\"__name__\":", p + 1)) {
    ++their_series;
  }
  if (their_series != ours.series.answers) {
    return absl::InternalError(fmt::format("series {}: strata answered {}, Prometheus {}",
                                           kPromSeriesMetric, ours.series.answers, their_series));
  }
  STRATA_ASSIGN_OR_RETURN(const std::string labels, prometheus.Get("/api/v1/labels", window));
  if (labels.find(DataArrayJson(ours.label_names)) == std::string::npos) {
    return absl::InternalError(absl::StrCat("label names: strata answered ",
                                            DataArrayJson(ours.label_names), ", Prometheus ",
                                            labels.substr(0, 300)));
  }
  std::vector<std::string> metric_names = ours.metric_names;
  std::erase(metric_names, "target_info");
  STRATA_ASSIGN_OR_RETURN(const std::string values,
                          prometheus.Get("/api/v1/label/__name__/values", window));
  if (values.find(DataArrayJson(metric_names)) == std::string::npos) {
    return absl::InternalError(absl::StrCat("metric names: strata answered ",
                                            DataArrayJson(metric_names), " (and target_info), ",
                                            "Prometheus ", values.substr(0, 300)));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<PromqlBenchNumbers> RunPromqlBench(storage::Storage& storage, query::QueryPool& pool,
                                                  const std::string& data_dir, int64_t end_ns,
                                                  const PromqlBenchOptions& options) {
  PromqlBenchNumbers numbers;
  const int steps = static_cast<int>(std::max<uint64_t>(40, options.points / kPointsPerStep));
  const int64_t end_s = end_ns / 1'000'000'000 / 60 * 60;
  const int64_t start_s = end_s - static_cast<int64_t>(steps) * kStepSeconds;
  const Model model = BuildModel(start_s, steps);
  numbers.points = static_cast<uint64_t>(steps) * kPointsPerStep;
  numbers.window_hours = static_cast<double>(steps * kStepSeconds) / 3600;

  constexpr int kStepsPerRequest = 240;
  for (int from = 0; from < steps; from += kStepsPerRequest) {
    const int to = std::min(steps, from + kStepsPerRequest);
    auto batch = std::make_unique<otlp::MetricBatch>();
    STRATA_RETURN_IF_ERROR(otlp::DecodeMetricsJson(OtlpJson(model, from, to), batch.get()));
    storage::WriteRequest request;
    request.metrics = std::move(batch);
    request.rows = static_cast<uint64_t>(to - from) * kPointsPerStep;
    request.bytes = request.rows * 200;
    STRATA_RETURN_IF_ERROR(storage.Write(std::move(request)));
  }

  const std::string scratch =
      options.scratch_dir.empty() ? data_dir + ".prometheus" : options.scratch_dir;
  std::filesystem::remove_all(scratch);
  std::filesystem::create_directories(scratch);
  STRATA_ASSIGN_OR_RETURN(numbers.prometheus_samples,
                          WriteOpenMetrics(model, scratch + "/data.om"));
  STRATA_RETURN_IF_ERROR(Run(fmt::format("promtool tsdb create-blocks-from openmetrics {} {} 2>&1",
                                         scratch + "/data.om", scratch + "/tsdb"))
                             .status());
  std::filesystem::remove(scratch + "/data.om");
  auto prometheus = std::make_unique<Prometheus>();
  STRATA_RETURN_IF_ERROR(prometheus->Start(scratch, scratch + "/tsdb"));

  const std::shared_ptr<const storage::Snapshot> snapshot = storage.Pin();
  const query::ViewFiles files = query::ViewFilesOf(*snapshot);
  const int64_t start_ms = start_s * 1000, end_ms = (end_s - kStepSeconds) * 1000;
  std::vector<double> rate_s, quantile_s, prom_rate_s, prom_quantile_s;
  // As `strata serve` keeps them by default: decoded files kept across runs.
  api::internal::PointCache cache(api::internal::PointCache::kDefaultMaxBytes);
  for (int run = 0; run < std::max(1, options.runs); ++run) {
    for (const char* text : {kRateQuery, kQuantileQuery}) {
      const bool rate = text == kRateQuery;
      const api::CallOptions call{.deadline = std::chrono::seconds(120)};
      api::MetricsSeriesSource source(pool, files, call, &cache);
      const api::PromQuery query{.text = text, .start = start_ms, .end = end_ms, .step = 60'000};
      BenchClock::time_point t0 = BenchClock::now();
      auto result = api::EvaluatePromQuery(query, source, 120'000);
      (rate ? rate_s : quantile_s).push_back(SecondsSince(t0));
      if (!result.ok()) return result.status();
      STRATA_ASSIGN_OR_RETURN(auto theirs,
                              prometheus->Time(text, start_s, end_s - kStepSeconds, 60));
      (rate ? prom_rate_s : prom_quantile_s).push_back(theirs.first);
      if (result->matrix.size() != theirs.second) {
        return absl::InternalError(fmt::format("{}: strata answered {} series, Prometheus {}", text,
                                               result->matrix.size(), theirs.second));
      }
      (rate ? numbers.rate_series : numbers.quantile_series) = theirs.second;
    }
  }
  numbers.strata_rate_p50_ms = QuantileMs(rate_s, 0.5);
  numbers.strata_quantile_p50_ms = QuantileMs(quantile_s, 0.5);
  numbers.prometheus_rate_p50_ms = QuantileMs(prom_rate_s, 0.5);
  numbers.prometheus_quantile_p50_ms = QuantileMs(prom_quantile_s, 0.5);
  STRATA_ASSIGN_OR_RETURN(numbers.listings,
                          RunPromLabelsBench(pool, files, start_ms, end_ms, options.runs));
  STRATA_RETURN_IF_ERROR(
      CheckListings(*prometheus, numbers.listings, start_s, end_s - kStepSeconds));
  prometheus.reset();
  std::filesystem::remove_all(scratch);
  return numbers;
}

}  // namespace strata::bench
