#!/usr/bin/env bash
# Sets up, builds (release preset) and runs strata's main job: `strata serve`
# with an embedded data directory (./strata-data unless --data-dir or
# STRATA_DATA_DIR says otherwise). Extra arguments go to `strata serve`.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bash scripts/setup.sh
cmake --preset release >/dev/null
cmake --build --preset release --target strata
exec build/release/strata serve "$@"
