#!/usr/bin/env bash
# A throwaway single-node Ceph with its S3 gateway on loopback, for tests
# and benchmarks (docs/development.md, "S3 tests against RADOS gateway").
#
#   scripts/radosgw.sh start DIR   one monitor, one OSD on the in-memory
#                                  `memstore` object store, and radosgw (beast
#                                  frontend) on free loopback ports, all
#                                  writing only under DIR (which must be empty
#                                  or missing); creates an S3 user with
#                                  generated keys and a bucket, and prints
#                                  shell `export` lines: S3_TEST_ENDPOINT,
#                                  S3_TEST_BUCKET,
#                                  S3_TEST_ACCESS_KEY_ID,
#                                  S3_TEST_SECRET_ACCESS_KEY,
#                                  S3_TEST_REGION (also in DIR/env).
#   scripts/radosgw.sh stop DIR    kills the three daemons (by the pids they
#                                  wrote under DIR) and removes DIR.
#   scripts/radosgw.sh run CMD...  start in a fresh temporary directory,
#                                  run CMD with the variables exported, stop,
#                                  and exit with CMD's status (how ctest runs
#                                  the S3 conformance suite).
#
# Nothing is written outside DIR and no system service is touched, so it
# works for any user. Authentication inside the cluster is off (the daemons
# listen on 127.0.0.1 only and live as long as one test run); the S3 API
# still checks every request's Signature V4 against the user's keys.
set -euo pipefail

die() { echo "radosgw.sh: $*" >&2; exit 1; }

# A free TCP port on 127.0.0.1 (the kernel picks it; the socket is closed
# before the daemon binds it, a window no test relies on being empty).
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

random_text() {  # $1 characters from [A-Z0-9] (access key) or [A-Za-z0-9] (secret)
  python3 -c 'import secrets, string, sys
alphabet = string.ascii_uppercase + string.digits + (string.ascii_lowercase if sys.argv[2] == "mixed" else "")
print("".join(secrets.choice(alphabet) for _ in range(int(sys.argv[1]))))' "$1" "$2"
}

# Waits up to $1 seconds for the command after it to succeed.
wait_for() {
  local limit="$1"; shift
  local deadline=$((SECONDS + limit))
  until "$@" >/dev/null 2>&1; do
    if [ "$SECONDS" -ge "$deadline" ]; then return 1; fi
    sleep 0.2
  done
}

start() {
  local dir="$1"
  for tool in ceph-mon ceph-osd radosgw radosgw-admin monmaptool ceph python3 curl; do
    command -v "$tool" >/dev/null || die "$tool is missing; run scripts/setup.sh --tests"
  done
  mkdir -p "$dir"
  dir="$(cd "$dir" && pwd)"
  [ -z "$(ls -A "$dir")" ] || die "$dir is not empty"
  mkdir -p "$dir/mon" "$dir/osd" "$dir/run" "$dir/log" "$dir/rgw"
  local fsid mon_port rgw_port conf
  fsid="$(python3 -c 'import uuid; print(uuid.uuid4())')"
  mon_port="$(free_port)"
  rgw_port="$(free_port)"
  conf="$dir/ceph.conf"
  # paxos_*: the monitor commits each change within 50 ms instead of about a
  # second, which is most of the time radosgw spends creating its pools.
  cat >"$conf" <<EOF
[global]
fsid = $fsid
mon_host = v2:127.0.0.1:$mon_port
public_network = 127.0.0.0/8
ms_bind_msgr1 = false
auth_cluster_required = none
auth_service_required = none
auth_client_required = none
ms_cluster_mode = crc
ms_service_mode = crc
ms_client_mode = crc
ms_mon_cluster_mode = crc
ms_mon_service_mode = crc
ms_mon_client_mode = crc
client_mount_timeout = 30
run_dir = $dir/run
admin_socket = $dir/run/\$name.asok
log_file = $dir/log/\$name.log
pid_file = $dir/run/\$name.pid
crash_dir = $dir/crash
exit_on_mark_down = false
mon_data = $dir/mon/\$name
mon_allow_pool_size_one = true
paxos_propose_interval = 0.05
paxos_min_wait = 0.01
osd_pool_default_pg_num = 8
mon_warn_on_pool_no_redundancy = false
osd_pool_default_size = 1
osd_pool_default_min_size = 1
osd_pool_default_pgp_num = 8
osd_pool_default_pg_autoscale_mode = off
osd_crush_chooseleaf_type = 0
osd_data = $dir/osd/\$name
osd_objectstore = memstore
memstore_device_bytes = 2147483648
osd_op_num_shards = 1
osd_op_num_threads_per_shard = 2
[client.rgw]
rgw_frontends = beast endpoint=127.0.0.1:$rgw_port
rgw_data = $dir/rgw
rgw_dns_name = localhost
rgw_enable_usage_log = false
rgw_thread_pool_size = 64
EOF
  monmaptool --create --fsid "$fsid" --addv a "[v2:127.0.0.1:$mon_port]" "$dir/monmap" >/dev/null
  ceph-mon -c "$conf" -i a --mkfs --monmap "$dir/monmap" >>"$dir/log/setup.log" 2>&1 ||
    die "ceph-mon --mkfs failed (see $dir/log/)"
  ceph-mon -c "$conf" -i a >>"$dir/log/setup.log" 2>&1 || die "ceph-mon did not start (see $dir/log/)"
  local ceph=(ceph -c "$conf" --connect-timeout 10)
  wait_for 20 "${ceph[@]}" mon stat || die "the monitor did not answer (see $dir/log/)"

  local osd_uuid osd_id
  osd_uuid="$(python3 -c 'import uuid; print(uuid.uuid4())')"
  osd_id="$("${ceph[@]}" osd new "$osd_uuid")"
  mkdir -p "$dir/osd/osd.$osd_id"
  ceph-osd -c "$conf" -i "$osd_id" --mkfs --osd-uuid "$osd_uuid" >>"$dir/log/setup.log" 2>&1 ||
    die "ceph-osd --mkfs failed (see $dir/log/)"
  ceph-osd -c "$conf" -i "$osd_id" >>"$dir/log/setup.log" 2>&1 || die "ceph-osd did not start"
  osd_up() { "${ceph[@]}" osd dump 2>/dev/null | grep -q "^osd.$osd_id up"; }
  wait_for 30 osd_up || die "the OSD did not come up (see $dir/log/)"

  radosgw -c "$conf" -n client.rgw >>"$dir/log/setup.log" 2>&1 || die "radosgw did not start"
  wait_for 60 curl -sf -o /dev/null "http://127.0.0.1:$rgw_port/" ||
    die "radosgw did not answer on 127.0.0.1:$rgw_port (see $dir/log/)"

  local access_key secret_key
  access_key="$(random_text 20 upper)"
  secret_key="$(random_text 40 mixed)"
  radosgw-admin -c "$conf" user create --uid=strata --display-name=strata \
    --access-key="$access_key" --secret-key="$secret_key" >>"$dir/log/setup.log" 2>&1 ||
    die "radosgw-admin user create failed (see $dir/log/)"
  # The tests' bucket, made with curl's own Signature V4 (the header names
  # the payload unsigned, which curl does not add by itself).
  curl -sf -o /dev/null -X PUT "http://127.0.0.1:$rgw_port/strata-test" \
    -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" --aws-sigv4 "aws:amz:default:s3" \
    --user "$access_key:$secret_key" || die "could not create the bucket strata-test"
  cat >"$dir/env" <<EOF
export S3_TEST_ENDPOINT=http://127.0.0.1:$rgw_port
export S3_TEST_BUCKET=strata-test
export S3_TEST_REGION=default
export S3_TEST_ACCESS_KEY_ID=$access_key
export S3_TEST_SECRET_ACCESS_KEY=$secret_key
EOF
  cat "$dir/env"
}

stop() {
  local dir="$1"
  [ -d "$dir" ] || return 0
  local pid_file pid
  for pid_file in "$dir"/run/*.pid; do
    [ -f "$pid_file" ] || continue
    pid="$(cat "$pid_file")"
    kill -9 "$pid" 2>/dev/null || true
  done
  # Wait (bounded) for them to be gone, then remove the directory.
  for pid_file in "$dir"/run/*.pid; do
    [ -f "$pid_file" ] || continue
    pid="$(cat "$pid_file")"
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  done
  rm -rf "$dir"
}

case "${1:-}" in
  start) [ $# -eq 2 ] || die "usage: radosgw.sh start DIR"; start "$2" ;;
  stop) [ $# -eq 2 ] || die "usage: radosgw.sh stop DIR"; stop "$2" ;;
  run)
    shift
    [ $# -ge 1 ] || die "usage: radosgw.sh run COMMAND..."
    run_dir="$(mktemp -d "${TMPDIR:-/tmp}/strata-radosgw.XXXXXX")"
    trap 'stop "$run_dir"' EXIT
    started=$SECONDS
    start "$run_dir" >/dev/null || { cat "$run_dir"/log/*.log >&2 2>/dev/null | tail -40; exit 1; }
    echo "radosgw.sh: radosgw ready in $((SECONDS - started)) s" >&2
    # shellcheck disable=SC1091
    source "$run_dir/env"
    status=0
    "$@" || status=$?
    exit "$status"
    ;;
  *) die "usage: radosgw.sh start DIR | stop DIR | run COMMAND..." ;;
esac
