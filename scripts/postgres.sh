#!/usr/bin/env bash
# A throwaway single-node PostgreSQL 15 on loopback, for tests and
# benchmarks of the shared control store (docs/development.md, "Tests
# against PostgreSQL").
#
#   scripts/postgres.sh start DIR   initdb into DIR/data (DIR must be empty
#                                   or missing), start the server on a free
#                                   127.0.0.1 port with its socket under DIR,
#                                   create the database `strata`, and print
#                                   the connection URL
#                                   postgres://strata@127.0.0.1:PORT/strata
#                                   on stdout (also in DIR/url).
#   scripts/postgres.sh stop DIR    stop the server (immediate shutdown) and
#                                   remove DIR.
#   scripts/postgres.sh fixture DIR ctest's fixture for a whole test run:
#                                   stop and remove what a killed earlier run
#                                   left in DIR, then start as `start` does;
#                                   without PostgreSQL installed, say so and
#                                   exit 0 with no DIR/url (the tests that
#                                   need it then skip, saying why).
#   scripts/postgres.sh run CMD...  start in a fresh temporary directory, run
#                                   CMD with STRATA_TEST_POSTGRES_URL exported,
#                                   stop, and exit with CMD's status.
#
# PostgreSQL refuses to run as root, so when run as root the server runs as
# the `postgres` user (Debian's package creates it) and DIR is chowned to
# it. Authentication is `trust`, for 127.0.0.1 only: the server lives as
# long as one test run and listens nowhere else. fsync is off (a crashed
# test server is thrown away, never recovered).
set -euo pipefail

die() { echo "postgres.sh: $*" >&2; exit 1; }

bin="${POSTGRES_BIN:-/usr/lib/postgresql/15/bin}"

# A free TCP port on 127.0.0.1 (the kernel picks it; the socket is closed
# before the server binds it, a window no test relies on being empty).
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# Runs a command as the server's user: ourselves, or `postgres` under root.
as_server_user() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

start() {
  local dir="$1"
  for tool in initdb pg_ctl psql; do
    [ -x "$bin/$tool" ] || die "$bin/$tool is missing; run scripts/setup.sh --tests"
  done
  command -v python3 >/dev/null || die "python3 is missing; run scripts/setup.sh --tests"
  mkdir -p "$dir"
  dir="$(cd "$dir" && pwd)"
  [ -z "$(ls -A "$dir")" ] || die "$dir is not empty"
  if [ "$(id -u)" -eq 0 ]; then
    id postgres >/dev/null 2>&1 || die "running as root needs the postgres user (postgresql-15 creates it)"
    chown postgres "$dir"
  fi
  local port
  port="$(free_port)"
  as_server_user "$bin/initdb" -D "$dir/data" -U strata --auth=trust --encoding=UTF8 \
    --no-locale >"$dir/initdb.log" 2>&1 || die "initdb failed (see $dir/initdb.log)"
  cat >"$dir/data/pg_hba.conf" <<HBA
host all all 127.0.0.1/32 trust
local all all trust
HBA
  as_server_user "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 30 \
    -o "-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories=$dir \
-c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200" \
    start >/dev/null 2>&1 || die "the server did not start (see $dir/server.log)"
  as_server_user "$bin/psql" -h 127.0.0.1 -p "$port" -U strata -d postgres -q \
    -c "CREATE DATABASE strata" >/dev/null || die "could not create the database strata"
  echo "postgres://strata@127.0.0.1:$port/strata" >"$dir/url"
  cat "$dir/url"
}

stop() {
  local dir="$1"
  [ -d "$dir" ] || return 0
  if [ -f "$dir/data/postmaster.pid" ]; then
    as_server_user "$bin/pg_ctl" -D "$dir/data" -m immediate -w -t 30 stop >/dev/null 2>&1 || true
  fi
  rm -rf "$dir"
}

case "${1:-}" in
  start) [ $# -eq 2 ] || die "usage: postgres.sh start DIR"; start "$2" ;;
  stop) [ $# -eq 2 ] || die "usage: postgres.sh stop DIR"; stop "$2" ;;
  fixture)
    [ $# -eq 2 ] || die "usage: postgres.sh fixture DIR"
    stop "$2"
    if [ ! -x "$bin/initdb" ]; then
      echo "postgres.sh: $bin/initdb is missing; the PostgreSQL tests will skip (scripts/setup.sh --tests installs it)"
      exit 0
    fi
    start "$2" || { tail -40 "$2"/*.log >&2 2>/dev/null; exit 1; }
    ;;
  run)
    shift
    [ $# -ge 1 ] || die "usage: postgres.sh run COMMAND..."
    run_dir="$(mktemp -d "${TMPDIR:-/tmp}/strata-postgres.XXXXXX")"
    rmdir "$run_dir"
    trap 'stop "$run_dir"' EXIT
    start "$run_dir" >/dev/null || { tail -40 "$run_dir"/*.log >&2 2>/dev/null; exit 1; }
    STRATA_TEST_POSTGRES_URL="$(cat "$run_dir/url")"
    export STRATA_TEST_POSTGRES_URL
    status=0
    "$@" || status=$?
    exit "$status"
    ;;
  *) die "usage: postgres.sh start DIR | stop DIR | fixture DIR | run COMMAND..." ;;
esac
