#include "cli/bench.h"

#include "CLI/CLI.hpp"
#include "cli/bench_compact.h"
#include "cli/bench_ingest.h"
#include "cli/bench_query.h"
#include "cli/bench_writer.h"

namespace strata::cli {

std::vector<Command> RegisterBenchCommands(CLI::App* app) {
  CLI::App* bench = app->add_subcommand("bench", "Benchmarks that print numbers");
  bench->require_subcommand(1);
  return {RegisterBenchWriter(bench), RegisterBenchIngest(bench), RegisterBenchQuery(bench),
          RegisterBenchCompact(bench)};
}

}  // namespace strata::cli
