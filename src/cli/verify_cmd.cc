#include "cli/verify_cmd.h"

#include <cstdio>
#include <memory>
#include <string>

#include "CLI/CLI.hpp"
#include "cli/exit_codes.h"
#include "cli/flags.h"
#include "cli/object_store_flags.h"
#include "common/runbook.h"
#include "fmt/format.h"
#include "io/posix_file_system.h"
#include "otlp/json_writer.h"
#include "query/parquet_file_check.h"
#include "storage/check/verify.h"
#include "storage/offload/remote_check.h"

namespace strata::cli {
namespace {

using storage::BatchStatus;
using storage::BatchVerdict;
using storage::VerifyReport;

// One line per batch: status, day, id, then what failed.
void PrintVerdict(const BatchVerdict& verdict) {
  std::string line = fmt::format("{:<10}  {}  {}", storage::BatchStatusName(verdict.status),
                                 verdict.day, verdict.id.ToString());
  switch (verdict.status) {
    case BatchStatus::kOk:
      break;
    case BatchStatus::kGone:
      line += "  " + verdict.message;
      break;
    case BatchStatus::kCorrupt:
    case BatchStatus::kUnreadable:
      line += fmt::format("  check \"{}\"{}: {}", verdict.check,
                          verdict.file.empty() ? "" : " on " + verdict.file, verdict.message);
      break;
  }
  fmt::print("{}\n", line);
  std::fflush(stdout);
}

std::string Ids(const std::vector<storage::BatchId>& ids) {
  std::string out;
  for (const storage::BatchId& id : ids) out += (out.empty() ? "" : ", ") + id.ToString();
  return out;
}

void PrintSummary(const VerifyCommandOptions& options, const VerifyReport& report) {
  for (const storage::VerifyProblem& problem : report.problems) {
    fmt::print("{:<10}  {}\n", "problem", problem.message);
  }
  for (const storage::StrayEntry& stray : report.strays) {
    fmt::print(
        "{:<10}  telemetry/{}: strata never writes it ({} belongs there); the next boot sets it "
        "aside into telemetry/quarantine/stray-<day>-<n>/, deleting nothing; {}\n",
        "stray", stray.path, stray.expected, RunbookRef("stray-entry-set-aside"));
  }
  if (report.compaction.has_value()) {
    fmt::print(
        "compaction marker: COMPACTION.json names output {} and inputs {} (day {}): a "
        "compaction is publishing, or a crash cut one short and the next boot resolves it\n",
        report.compaction->output.ToString(), Ids(report.compaction->inputs),
        report.compaction->day);
  }
  if (report.compaction_temp) {
    fmt::print(
        "compaction marker: COMPACTION.json.tmp exists (a compaction writing its marker, or one "
        "a crash cut short, which the next boot removes)\n");
  }
  fmt::print(
      "verified {} batches in {}{}: {} ok, {} corrupt, {} gone, {} unreadable; {} other "
      "problems; {} stray entries\n",
      report.batches.size(), options.data_dir, options.deep ? " (deep)" : "",
      report.Count(BatchStatus::kOk), report.Count(BatchStatus::kCorrupt),
      report.Count(BatchStatus::kGone), report.Count(BatchStatus::kUnreadable),
      report.problems.size(), report.strays.size());
  if (report.Healthy()) {
    fmt::print("healthy{}\n", options.deep ? "" : " (run with --deep to decode every page too)");
  } else if (report.Count(BatchStatus::kCorrupt) > 0) {
    fmt::print("CORRUPTION FOUND: set each corrupt batch aside with `strata quarantine <id>`; {}\n",
               RunbookRef("verify-and-quarantine"));
  } else if (!report.problems.empty()) {
    fmt::print(
        "PROBLEMS FOUND: boot refuses this data directory until each problem above is "
        "resolved as its runbook section says\n");
  } else {
    fmt::print("INCOMPLETE: some batches could not be read; check the disk and run again\n");
  }
}

// A JSON string literal (otlp::JsonWriter's escaping), or null for "".
std::string Quote(std::string_view text) {
  std::string out = "\"";
  otlp::JsonWriter::AppendEscaped(text, &out);
  return out + "\"";
}
std::string QuoteOrNull(std::string_view text) { return text.empty() ? "null" : Quote(text); }

// One object: data_dir, deep, healthy, batches (id, day, status, check,
// file, message), problems, strays (path, expected), compaction,
// compaction_temp, counts.
std::string ReportJson(const VerifyCommandOptions& options, const VerifyReport& report) {
  std::string batches;
  for (const BatchVerdict& verdict : report.batches) {
    batches += fmt::format(
        "{}{{\"id\":{},\"day\":{},\"status\":{},\"check\":{},\"file\":{},\"message\":{}}}",
        batches.empty() ? "" : ",", Quote(verdict.id.ToString()), Quote(verdict.day),
        Quote(storage::BatchStatusName(verdict.status)), QuoteOrNull(verdict.check),
        QuoteOrNull(verdict.file), QuoteOrNull(verdict.message));
  }
  std::string problems;
  for (const storage::VerifyProblem& problem : report.problems) {
    problems += fmt::format("{}{{\"path\":{},\"message\":{}}}", problems.empty() ? "" : ",",
                            Quote(problem.path), Quote(problem.message));
  }
  std::string strays;
  for (const storage::StrayEntry& stray : report.strays) {
    strays += fmt::format("{}{{\"path\":{},\"expected\":{}}}", strays.empty() ? "" : ",",
                          Quote("telemetry/" + stray.path), Quote(stray.expected));
  }
  std::string compaction = "null";
  if (report.compaction.has_value()) {
    std::string inputs;
    for (const storage::BatchId& id : report.compaction->inputs) {
      inputs += (inputs.empty() ? "" : ",") + Quote(id.ToString());
    }
    compaction =
        fmt::format("{{\"day\":{},\"output\":{},\"inputs\":[{}]}}", Quote(report.compaction->day),
                    Quote(report.compaction->output.ToString()), inputs);
  }
  return fmt::format(
      "{{\"data_dir\":{},\"deep\":{},\"healthy\":{},\"batches\":[{}],\"problems\":[{}],"
      "\"strays\":[{}],\"compaction\":{},\"compaction_temp\":{},\"counts\":{{\"ok\":{},"
      "\"corrupt\":{},\"gone\":{},\"unreadable\":{},\"problems\":{},\"strays\":{}}}}}",
      Quote(options.data_dir), options.deep, report.Healthy(), batches, problems, strays,
      compaction, report.compaction_temp, report.Count(BatchStatus::kOk),
      report.Count(BatchStatus::kCorrupt), report.Count(BatchStatus::kGone),
      report.Count(BatchStatus::kUnreadable), report.problems.size(), report.strays.size());
}

}  // namespace

int RunVerify(const VerifyCommandOptions& options) {
  if (options.data_dir.empty()) {
    fmt::print(stderr, "strata verify: --data-dir must not be empty\n");
    return kExitUsage;
  }
  storage::VerifyOptions verify;
  verify.deep = options.deep;
  std::unique_ptr<query::DuckDbEngine> engine;
  if (options.deep) {
    absl::StatusOr<std::unique_ptr<query::DuckDbEngine>> opened =
        query::OpenParquetFileCheckEngine();
    if (!opened.ok()) {
      fmt::print(stderr, "strata verify: cannot start DuckDB for --deep: {}\n",
                 std::string(opened.status().message()));
      return kExitFailure;
    }
    engine = *std::move(opened);
    verify.parquet_check = query::DuckDbParquetFileCheck(engine.get());
  }
  if (!options.json) verify.on_batch = PrintVerdict;

  PosixFileSystem fs;
  std::unique_ptr<objectstore::BatchStore> store;
  if (!options.object_store.url.empty()) {
    absl::StatusOr<std::unique_ptr<objectstore::BatchStore>> opened =
        objectstore::OpenObjectStore(fs, options.object_store, objectstore::ProcessEnvironment());
    if (!opened.ok()) {
      fmt::print(stderr, "strata verify: {}; {}\n", std::string(opened.status().message()),
                 RunbookRef("object-store-url-unusable"));
      return kExitUsage;
    }
    store = *std::move(opened);
  }
  absl::StatusOr<VerifyReport> report = storage::VerifyDataDir(fs, options.data_dir, verify);
  if (!report.ok()) {
    fmt::print(stderr, "strata verify: {}\n", std::string(report.status().message()));
    return kExitFailure;
  }
  std::string json = options.json ? ReportJson(options, *report) : "";
  // The remote copy of every batch that is whole locally.
  size_t remote_counts[5] = {};
  if (store != nullptr) {
    std::string remote_json;
    for (const BatchVerdict& verdict : report->batches) {
      if (verdict.status != BatchStatus::kOk) continue;
      const storage::RemoteVerdict remote =
          storage::CheckRemoteCopy(fs, *store, verdict.day, verdict.id, verdict.dir, options.deep);
      ++remote_counts[static_cast<int>(remote.status)];
      if (options.json) {
        remote_json += fmt::format("{}{{\"id\":{},\"status\":{},\"key\":{},\"message\":{}}}",
                                   remote_json.empty() ? "" : ",", Quote(verdict.id.ToString()),
                                   Quote(storage::RemoteStatusName(remote.status)),
                                   QuoteOrNull(remote.key), QuoteOrNull(remote.message));
      } else {
        fmt::print(
            "{:<10}  {}  {}  remote {}{}\n",
            remote.status == storage::RemoteStatus::kOk ? "ok" : "remote", verdict.day,
            verdict.id.ToString(), storage::RemoteStatusName(remote.status),
            remote.message.empty() ? "" : fmt::format(": {} ({})", remote.message, remote.key));
      }
    }
    if (options.json) {
      json.pop_back();  // the closing brace
      json += fmt::format(",\"remote\":{{\"store\":{},\"batches\":[{}]}}}}",
                          Quote(store->Describe()), remote_json);
    }
  }
  if (options.json) {
    fmt::print("{}\n", json);
  } else {
    PrintSummary(options, *report);
    if (store != nullptr) {
      fmt::print(
          "remote copy in {}: {} ok, {} not uploaded, {} incomplete, {} mismatch, {} unreadable\n",
          store->Describe(), remote_counts[0], remote_counts[1], remote_counts[2], remote_counts[3],
          remote_counts[4]);
    }
  }
  if (report->Count(BatchStatus::kCorrupt) > 0 || !report->problems.empty() ||
      remote_counts[static_cast<int>(storage::RemoteStatus::kIncomplete)] > 0 ||
      remote_counts[static_cast<int>(storage::RemoteStatus::kMismatch)] > 0) {
    return kExitCorruption;
  }
  if (remote_counts[static_cast<int>(storage::RemoteStatus::kUnreadable)] > 0) return kExitFailure;
  return report->Healthy() ? kExitOk : kExitFailure;
}

Command RegisterVerify(CLI::App* app, std::set<std::string>* env_names) {
  auto options = std::make_shared<VerifyCommandOptions>();
  CLI::App* command = app->add_subcommand(
      "verify", "Check every batch of a data directory (read-only; works beside a running server)");
  AddFlag(command, env_names, "data-dir", &options->data_dir, "Data directory");
  command->add_flag("--deep", options->deep,
                    "Also decode every page (strata's reader and DuckDB), check sort order and "
                    "that spans.tidx agrees with the rows");
  command->add_flag("--json", options->json, "Print one JSON object instead of lines");
  AddObjectStoreFlags(
      command, env_names, &options->object_store,
      "Also check each batch's copy in this object store (s3://<bucket>[/<prefix>] or "
      "file:///<path>; --deep also compares checksums)");
  return Command{command, [options] { return RunVerify(*options); }};
}

}  // namespace strata::cli
