#!/usr/bin/env bash
# Installs everything strata needs on a Debian 12 machine: Debian packages,
# DuckDB 1.4.4 (prebuilt library and header) and the OTLP .proto files used
# by tests, both from the npm registry, and the web UI's build tools.
# Idempotent: when everything is present it only checks and returns in
# about a second. Fetched files live in .deps/, which git ignores.
#
# `setup.sh --tests` (scripts/test.sh) also installs what only the tests
# need: Debian's chromium and the browser tests' playwright-core
# (tests/ui), so the run command stays lean.
set -euo pipefail
for_tests=false
if [ "${1:-}" = "--tests" ]; then for_tests=true; fi

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
deps="$root/.deps"

apt_packages=(
  cmake ninja-build g++ clang-14 libclang-rt-14-dev lld-14 clang-format clang-tidy
  pkg-config curl ca-certificates
  libgtest-dev libgmock-dev libbenchmark-dev
  libprotobuf-dev protobuf-compiler libgrpc++-dev protobuf-compiler-grpc
  libabsl-dev libsimdjson-dev libzstd-dev libxxhash-dev libsqlite3-dev libre2-dev
  libsodium-dev libboost1.74-dev zlib1g-dev libssl-dev libcli11-dev libspdlog-dev libfmt-dev
  libcurl4-openssl-dev libpq-dev
)

# Debian packages only the tests use (installed with --tests): the browser,
# the openssl command that makes the TLS tests' throwaway CA, Prometheus
# (the PromQL oracle of tests/compat/promql_oracle.test.mjs and bench
# compat), and the smallest Ceph that serves S3 for the object store tests
# (scripts/radosgw.sh: one monitor, one in-memory OSD, the RADOS gateway;
# radosgw brings ceph-common's `ceph` and `radosgw-admin`), and libsnappy1v5,
# the reference the Snappy decoder's tests compare with (loaded with
# dlopen by the test only; strata never links it), and PostgreSQL 15, the
# throwaway server of the shared control store's tests (scripts/postgres.sh;
# strata itself only links libpq, the client library of libpq-dev above).
apt_test_packages=(chromium openssl prometheus radosgw ceph-mon ceph-osd python3 libsnappy1v5
  postgresql-15)

# Pinned npm packages: name@version, sha256 of the tarball npm delivers.
npm_packages=(
  "@duckdb/node-bindings-linux-x64@1.4.4-r.4 732fac4dc6b8f198870b9c4bb6ddf13544466daca00ad28ba2f1d80de5d7aa4b"
  "duckdb@1.4.4 5bb967dcbcd517670ba5f169f238fb9d6787e53752c60ebe24386169d76941ed"
  "@opentelemetry/otlp-grpc-exporter-base@0.38.0 d18571f5b755106c9e681ee45886dd523ac30715a30dca8ff411646b9cc09064"
)

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

install_debian_packages() {
  local missing=()
  local wanted=("${apt_packages[@]}")
  if $for_tests; then wanted+=("${apt_test_packages[@]}"); fi
  for p in "${wanted[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
      missing+=("$p")
    fi
  done
  if ! command -v npm >/dev/null 2>&1; then
    missing+=(nodejs npm)
  fi
  if [ ${#missing[@]} -gt 0 ]; then
    echo "setup: installing Debian packages: ${missing[*]}"
    as_root apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
  fi
}

# Fetches one npm tarball into .deps/npm and checks its sha256.
fetch_npm() {
  local spec="$1" want="$2"
  local cache="$deps/npm"
  mkdir -p "$cache"
  local stamp="$cache/${want}.tgz"
  if [ -f "$stamp" ] && [ "$(sha256sum "$stamp" | cut -d' ' -f1)" = "$want" ]; then
    echo "$stamp"
    return
  fi
  local tmp
  tmp="$(mktemp -d)"
  (cd "$tmp" && npm pack --silent "$spec" >/dev/null)
  local got_file
  got_file="$(ls "$tmp"/*.tgz)"
  local got
  got="$(sha256sum "$got_file" | cut -d' ' -f1)"
  if [ "$got" != "$want" ]; then
    echo "setup: checksum mismatch for $spec: expected $want, got $got" >&2
    rm -rf "$tmp"
    exit 1
  fi
  mv "$got_file" "$stamp"
  rm -rf "$tmp"
  echo "$stamp"
}

install_npm_packages() {
  local marker="$deps/npm-installed"
  local expected
  expected="$(printf '%s\n' "${npm_packages[@]}")"
  if [ -f "$marker" ] && [ "$(cat "$marker")" = "$expected" ] &&
     [ -f "$deps/duckdb/lib/libduckdb.so" ] && [ -f "$deps/duckdb/include/duckdb.h" ] &&
     [ -f "$deps/protos/opentelemetry/proto/trace/v1/trace.proto" ]; then
    return
  fi
  echo "setup: fetching pinned npm packages into .deps/"
  local entry spec sum tgz tmp
  for entry in "${npm_packages[@]}"; do
    spec="${entry% *}"
    sum="${entry#* }"
    tgz="$(fetch_npm "$spec" "$sum")"
    tmp="$(mktemp -d)"
    tar -xzf "$tgz" -C "$tmp"
    case "$spec" in
      @duckdb/node-bindings-linux-x64@*)
        mkdir -p "$deps/duckdb/lib"
        cp "$tmp/package/libduckdb.so" "$deps/duckdb/lib/libduckdb.so"
        ;;
      duckdb@*)
        mkdir -p "$deps/duckdb/include"
        cp "$tmp/package/src/duckdb/src/include/duckdb.h" "$deps/duckdb/include/duckdb.h"
        ;;
      @opentelemetry/otlp-grpc-exporter-base@*)
        rm -rf "$deps/protos"
        mkdir -p "$deps/protos"
        cp -r "$tmp/package/build/protos/opentelemetry" "$deps/protos/"
        ;;
    esac
    rm -rf "$tmp"
  done
  printf '%s\n' "$expected" >"$marker"
}

# The OpenTelemetry JS SDK and exporters the end-to-end tests drive
# (tests/e2e/package.json, locked by package-lock.json), installed with
# `npm ci` into tests/e2e/node_modules (git-ignored). Skipped when the lock
# file has not changed since the last install.
install_e2e_clients() {
  npm_ci_locked "$root/tests/e2e" "the OpenTelemetry SDK clients for tests/e2e"
}

# `npm ci` in $1 (what it installs: $2) unless its package-lock.json is
# unchanged since the last install there.
npm_ci_locked() {
  local dir="$1" what="$2"
  local marker="$dir/node_modules/.strata-lock-sha256"
  local want
  want="$(sha256sum "$dir/package-lock.json" | cut -d' ' -f1)"
  if [ -f "$marker" ] && [ "$(cat "$marker")" = "$want" ]; then
    return
  fi
  echo "setup: installing $what"
  (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
  printf '%s\n' "$want" >"$marker"
}

# The web UI's build tools and libraries (ui/package.json, locked by
# ui/package-lock.json: esbuild, Preact), installed with `npm ci` into
# ui/node_modules (git-ignored); the build runs ui/build.mjs with them.
install_ui_packages() {
  npm_ci_locked "$root/ui" "the web UI's build tools (ui/)"
}

install_debian_packages
install_npm_packages
install_e2e_clients
install_ui_packages
if $for_tests; then
  npm_ci_locked "$root/tests/ui" "the browser tests' playwright-core (tests/ui)"
  npm_ci_locked "$root/tests/compat" "Grafana's TraceQL and LogQL grammars for the compatibility tests (tests/compat)"
fi
echo "setup: ok"
