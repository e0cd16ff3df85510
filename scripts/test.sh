#!/usr/bin/env bash
# Sets up, builds and runs every test: the full ctest suite under ASan+UBSan
# (a Debug build of every target: unit tests, the end-to-end and hostile
# suites against a real server, the object store's conformance suite against
# a throwaway RADOS gateway that ctest starts and stops around it with
# scripts/radosgw.sh, the layering check; the `debug` preset's
# tests are the same ones, so they are not run twice), the concurrency tests
# under ThreadSanitizer, each libFuzzer target for a bounded time (two at a
# time on two cores), and every benchmark in quick mode to prove it runs
# (from the asan build). Exits non-zero on the first failure. Each step
# prints the seconds it took; docs/development.md records a fresh clone's
# total.
#
# STRATA_FUZZ_SECONDS overrides the per-target fuzzing time (default 20:
# 24 targets, two at a time, in about 4 minutes after their build). CI's
# fuzzing is a smoke run that replays each seed corpus and explores a
# little; longer runs are made by hand (docs/development.md, "Fuzzing").
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
fuzz_seconds="${STRATA_FUZZ_SECONDS:-20}"
unset STRATA_FUZZ_SECONDS  # strata refuses unknown STRATA_* variables

step_started=$SECONDS
step() {
  printf '\n=== %s (the step before took %d s; %d s so far)\n' "$*" \
    $((SECONDS - step_started)) "$SECONDS"
  step_started=$SECONDS
}

# The tests that exercise threads: the Parquet list ranges' shared buffers
# (copies changed on several threads), the storage engine (the writer, the
# catalog's pins and retirement, the assembled engine, the crash loop), the
# token authenticator's refresh thread, and the OTLP/HTTP server and client
# (event loop threads answering from storage threads), and the query pool
# (connection checkout, the deadline timer). The gRPC adapter's
# tests are left out: Debian's libgrpc is not built for ThreadSanitizer, and
# its internals report races of their own.
tsan_tests='ListRanges|GroupCommitWriter|Catalog|DataDirTest|StorageTest|CrashLoop|CompactionTest|TokenAuthenticator|HttpServer|HttpStream|HttpClient|OtlpHttp|GzipTest|IngestService|QueryPool|LogFeed'

step "setup"
bash scripts/setup.sh --tests

step "asan build and tests"
cmake --preset asan >/dev/null
cmake --build --preset asan
ctest --preset asan -j2 --timeout 1200

step "tsan: storage concurrency tests"
cmake --preset tsan >/dev/null
cmake --build --preset tsan --target storage_test storage_suite_test control_test server_test \
  query_test parquet_test
TSAN_OPTIONS="suppressions=$root/scripts/tsan.supp" \
  ctest --preset tsan -j2 --timeout 1200 -R "$tsan_tests"

step "web UI: type check, unit tests, then in Chromium (asan binary)"
tests/ui/node_modules/.bin/tsc -p ui/test/tsconfig.json
node ui/test/build.mjs build/asan/ui-tests
node --test build/asan/ui-tests/
STRATA_BINARY=build/asan/strata STRATA_UI_SCREENSHOTS=build/asan/ui-screenshots \
  node --test tests/ui/

step "compatible APIs: TraceQL, PromQL and LogQL syntax against Grafana's and Prometheus's grammars, Tempo's protobuf through protoc, PromQL against a real Prometheus (asan)"
STRATA_TRACEQL_SYNTAX=build/asan/src/compat/traceql/traceql_syntax \
  STRATA_PROMQL_SYNTAX=build/asan/src/compat/promql/promql_syntax \
  STRATA_LOGQL_SYNTAX=build/asan/src/compat/logql/logql_syntax STRATA_BINARY=build/asan/strata \
  node --test tests/compat/

step "fuzz (${fuzz_seconds}s per target)"
bash scripts/fuzz.sh "$fuzz_seconds"

# The benchmarks run from the asan build: in CI they prove that every
# benchmark runs, with its own code under ASan+UBSan too. Their speed is
# measured with the release preset by hand (docs/benchmarks.md), so CI does
# not spend a fourth build on it.
step "benchmark programs (quick, asan): decode, spans writer, merges"
build/asan/bench/decode_bench --quick
build/asan/bench/spans_write_bench --spans=20000
build/asan/bench/merge_bench --inputs=2 --input-rows=5000

step "writer benchmark (quick, asan)"
(cd build/asan && ./strata bench writer --spans 200000 --logs 50000 --metric-points 20000)

step "ingest benchmark (quick, asan)"
(cd build/asan && ./strata bench ingest --phase-sec 3)

step "query benchmark (quick, asan)"
(cd build/asan && ./strata bench query --spans 400000 --batches 20 --lookups 300 --scans 3)

step "compatible APIs benchmark (quick, asan)"
(cd build/asan && ./strata bench compat --spans 200000 --batches 10 --runs 2 --lookups 20 --metric-points 20000)

step "rollups benchmark (quick, asan)"
(cd build/asan && ./strata bench rollups --spans 200000 --batches 20 --runs 3 --baseline-runs 1 \
  --ingest-rounds 1 --ingest-spans 100000 --freshness-requests 3)

step "compaction benchmark (quick, asan)"
(cd build/asan && ./strata bench compact --quick)

step "object store benchmark (quick, asan, against a throwaway RADOS gateway)"
(cd build/asan && bash "$root/scripts/radosgw.sh" run ./strata bench objectstore --objects 8 \
  --object-bytes 1048576 --reads 20)

step "all tests passed"
echo "test.sh: ${SECONDS} s in all"
