#!/usr/bin/env bash
# Usage: scripts/fuzz.sh [SECONDS] [JOBS]
# Builds the libFuzzer targets (fuzz preset: clang, ASan+UBSan) and runs each
# for SECONDS (default 60), JOBS targets at a time (default: one per core),
# starting from its committed seed corpus in fuzz/corpus/<kind>/ (proto_decoder_fuzz uses fuzz/corpus/proto/,
# parquet_reader_fuzz uses fuzz/corpus/parquet_reader/, gzip_fuzz uses fuzz/corpus/gzip/). New inputs go to a scratch corpus under
# build/fuzz/, never into the repository. A crash fails the script and leaves
# the reproducer in build/fuzz/artifacts/.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
seconds="${1:-60}"
cmake --preset fuzz >/dev/null
# Only the fuzz targets and what they link, not the rest of the tree.
fuzz_targets=()
for source in fuzz/*_fuzz.cc; do fuzz_targets+=("$(basename "$source" .cc)"); done
cmake --build --preset fuzz --target "${fuzz_targets[@]}"
mkdir -p build/fuzz/artifacts
# Targets run side by side, each for the whole time: the bound per target
# is unchanged, the wall time is divided by the number of jobs.
jobs="${2:-$(nproc)}"

# Runs one target; its verdict goes to build/fuzz/<name>.verdict.
run_one() {
  local target="$1" name kind seeds scratch
  name="$(basename "$target")"
  kind="${name%_fuzz}"
  seeds="fuzz/corpus/${kind%_decoder}"  # proto_decoder_fuzz -> proto, parquet_reader_fuzz -> parquet_reader
  if [ ! -d "$seeds" ]; then
    echo "fuzz: $name has no seed corpus at $seeds" >"build/fuzz/$name.verdict"
    return 1
  fi
  scratch="build/fuzz/corpus/$name"
  mkdir -p "$scratch"
  if "$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
      -artifact_prefix=build/fuzz/artifacts/ -print_final_stats=1 "$scratch" "$seeds" \
      >"build/fuzz/$name.log" 2>&1; then
    { echo "fuzz: $name ran ${seconds}s (seeds: $seeds)"
      grep -E 'stat::number_of_executed_units|Done [0-9]+ runs' "build/fuzz/$name.log" | tail -2
    } >"build/fuzz/$name.verdict"
  else
    { echo "fuzz: $name FAILED; see build/fuzz/$name.log"; tail -50 "build/fuzz/$name.log"
    } >"build/fuzz/$name.verdict"
    return 1
  fi
}

targets=(build/fuzz/fuzz/*_fuzz)
echo "fuzz: ${#targets[@]} targets, ${seconds}s each, $jobs at a time"
running=0
for target in "${targets[@]}"; do
  if [ "$running" -ge "$jobs" ]; then
    wait -n || true
    running=$((running - 1))
  fi
  run_one "$target" &
  running=$((running + 1))
done
wait || true
status=0
for target in "${targets[@]}"; do
  name="$(basename "$target")"
  cat "build/fuzz/$name.verdict"
  grep -q '^fuzz: .* ran ' "build/fuzz/$name.verdict" || status=1
done
exit $status
