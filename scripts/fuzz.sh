#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz preset: clang, ASan+UBSan) and runs each
# for the given number of seconds (default 60) starting from its committed
# seed corpus in fuzz/corpus/<kind>/ (proto_decoder_fuzz uses fuzz/corpus/proto/,
# parquet_reader_fuzz uses fuzz/corpus/parquet_reader/, gzip_fuzz uses fuzz/corpus/gzip/). New inputs go to a scratch corpus under
# build/fuzz/, never into the repository. A crash fails the script and leaves
# the reproducer in build/fuzz/artifacts/.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
seconds="${1:-60}"
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz
mkdir -p build/fuzz/artifacts
status=0
for target in build/fuzz/fuzz/*_fuzz; do
  name="$(basename "$target")"
  kind="${name%_fuzz}"
  seeds="fuzz/corpus/${kind%_decoder}"  # proto_decoder_fuzz -> proto, parquet_reader_fuzz -> parquet_reader
  [ -d "$seeds" ] || { echo "fuzz: $name has no seed corpus at $seeds"; exit 1; }
  scratch="build/fuzz/corpus/$name"
  mkdir -p "$scratch"
  echo "fuzz: $name for ${seconds}s (seeds: $seeds)"
  if ! "$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
      -artifact_prefix=build/fuzz/artifacts/ -print_final_stats=1 "$scratch" "$seeds" \
      >"build/fuzz/$name.log" 2>&1; then
    echo "fuzz: $name FAILED; see build/fuzz/$name.log"
    tail -50 "build/fuzz/$name.log"
    status=1
  else
    grep -E 'stat::number_of_executed_units|Done [0-9]+ runs' "build/fuzz/$name.log" | tail -2
  fi
done
exit $status
