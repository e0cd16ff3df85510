#!/usr/bin/env bash
# Proves scripts/check_layering.sh can fail: on a copy of the tree it passes
# unchanged, then refuses an upward include, an include within one layer
# between two folders, and a folder the layering table does not place.
set -euo pipefail
root="$1"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
fails=0

fresh_copy() {
  rm -rf "$work/tree"
  mkdir -p "$work/tree/docs"
  cp "$root/docs/architecture.md" "$work/tree/docs/"
  cp -r "$root/src" "$work/tree/src"
}

# expect_refused NAME PATTERN: the check exits 1 and prints PATTERN.
expect_refused() {
  local out rc=0
  out=$(bash "$root/scripts/check_layering.sh" "$work/tree" 2>&1) || rc=$?
  if [ "$rc" -ne 1 ] || ! grep -qF -- "$2" <<<"$out"; then
    echo "FAIL $1: exit $rc, expected 1 and \"$2\" in:"; echo "$out"; fails=$((fails + 1))
  else
    echo "ok   $1"
  fi
}

fresh_copy
if bash "$root/scripts/check_layering.sh" "$work/tree" >/dev/null; then
  echo "ok   the unchanged tree passes"
else
  echo "FAIL the unchanged tree is refused"; fails=$((fails + 1))
fi

echo '#include "api/api_server.h"' >>"$work/tree/src/common/path.cc"
expect_refused "upward include" "common/path.cc (common, layer 0) includes api/api_server.h (api, layer 9)"

fresh_copy
echo '#include "storage/check/verify.h"' >>"$work/tree/src/storage/maintenance/retention.cc"
expect_refused "include within a layer" "storage/maintenance/retention.cc (storage/maintenance, layer 6) includes storage/check/verify.h"

fresh_copy
mkdir -p "$work/tree/src/unplaced"
echo '#include "common/path.h"' >"$work/tree/src/unplaced/thing.cc"
expect_refused "a folder not in the table" "unplaced/thing.cc: its folder is not in the layering table"

echo "$((3 + 1 - fails)) passed, $fails failed"
[ "$fails" -eq 0 ]
