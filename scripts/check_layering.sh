#!/usr/bin/env bash
# Checks that no source file includes a folder above its own layer.
#
# The rule is the layering table of docs/architecture.md: each row names a
# rank and a folder under src/; a file may include headers from its own
# folder and from folders of a lower rank, never from one of the same rank
# or higher. A file belongs to the longest folder of the table its path
# starts with; a folder under src/ missing from the table is an error, so a
# new part must be placed before it can land. Test code (*_test.cc, testing/
# folders, *_testing.h, *_test_batches.h) may include anything.
#
# Usage: scripts/check_layering.sh [ROOT]   (ROOT holds docs/ and src/;
# default: this checkout). Prints every violation; exits 1 if there is one.
set -euo pipefail
root="${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
table="$root/docs/architecture.md"
[ -f "$table" ] || { echo "check_layering: $table is missing" >&2; exit 2; }

# "| 3 | `storage/table/` | ..." -> "storage/table 3", longest folders first.
ranks=$(sed -n 's/^| *\([0-9][0-9]*\) *| *`\([a-z_/]*[a-z_]\)\/\{0,1\}` *|.*/\2 \1/p' "$table" |
  awk '{ print length($1), $0 }' | sort -rn | cut -d' ' -f2-)
[ -n "$ranks" ] || { echo "check_layering: no layering table in $table" >&2; exit 2; }

cd "$root/src"
tops=" $(ls -d */ | tr -d '/' | tr '\n' ' ') "
find . -type f \( -name '*.cc' -o -name '*.h' \) | sed 's|^\./||' | sort |
  grep -Ev '(_test\.cc|_testing\.h|_test_batches\.h)$|(^|/)testing/' |
  awk -v ranks="$ranks" -v tops="$tops" '
    BEGIN {
      n = split(ranks, lines, "\n")
      for (i = 1; i <= n; i++) { split(lines[i], f, " "); folder[i] = f[1]; rank[i] = f[2] }
    }
    # The table row a path belongs to (longest prefix), or 0.
    function owner(path,    i) {
      for (i = 1; i <= n; i++) {
        if (index(path, folder[i] "/") == 1) return i
      }
      return 0
    }
    {
      file = $0
      me = owner(file)
      if (me == 0) { printf "%s: its folder is not in the layering table\n", file; bad = 1; next }
      while ((getline line < file) > 0) {
        if (line !~ /^#include "[a-z_]+\//) continue
        inc = line; sub(/^#include "/, "", inc); sub(/".*/, "", inc)
        top = inc; sub(/\/.*/, "", top)
        if (index(tops, " " top " ") == 0) continue   # a third-party header
        them = owner(inc)
        if (them == 0) { printf "%s: includes %s, whose folder is not in the table\n", file, inc; bad = 1; continue }
        if (them == me) continue
        if (rank[them] >= rank[me]) {
          printf "%s (%s, layer %d) includes %s (%s, layer %d)\n", file, folder[me], rank[me], inc, folder[them], rank[them]
          bad = 1
        }
      }
      close(file)
    }
    END { exit bad }
  ' && echo "check_layering: every include goes down the layers" || {
  echo "check_layering: the includes above break docs/architecture.md's layering table" >&2
  exit 1
}
