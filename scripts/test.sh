#!/usr/bin/env bash
# Sets up, builds and runs every test: the debug build's full ctest suite,
# the unit and differential tests again under ASan+UBSan, each libFuzzer
# target for a bounded time, and the decode benchmark in --quick mode to
# prove it runs. Exits non-zero on the first failure.
#
# STRATA_FUZZ_SECONDS overrides the per-target fuzzing time (default 60).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
fuzz_seconds="${STRATA_FUZZ_SECONDS:-60}"
unset STRATA_FUZZ_SECONDS  # strata refuses unknown STRATA_* variables

step() { printf '\n=== %s\n' "$*"; }

step "setup"
bash scripts/setup.sh

step "debug build and tests"
cmake --preset debug >/dev/null
cmake --build --preset debug
ctest --preset debug -j2 --timeout 600

step "asan build and tests"
cmake --preset asan >/dev/null
cmake --build --preset asan
ctest --preset asan -j2 --timeout 1200

step "fuzz (${fuzz_seconds}s per target)"
bash scripts/fuzz.sh "$fuzz_seconds"

step "decode benchmark (quick)"
cmake --preset release >/dev/null
cmake --build --preset release --target decode_bench
build/release/bench/decode_bench --quick

step "all tests passed"
