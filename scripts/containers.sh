#!/usr/bin/env bash
# Build and test codeq's container images with podman (rootful, no daemon). See docs/containers.md.
#
#   scripts/containers.sh deps          install podman, runc, netavark, aardvark-dns, iptables, podman-compose,
#                                       debootstrap; write the containers.conf this host needs
#   scripts/containers.sh base          debian:12 base image from debootstrap (once; cached as an image)
#   scripts/containers.sh build         localhost/codeq:dev (Dockerfile) and localhost/codeq-kafka:4.1.2
#                                       (tests/container/kafka/, from the jars of scripts/kafka.sh fetch)
#   scripts/containers.sh image-test    the demo jobs and a memory bomb through the image with the
#                                       narrow run settings, both isolation modes; exit 1 on a mismatch
#   scripts/containers.sh compose-test  compose.yaml + tests/container/compose.test.yaml: broker,
#                                       topics, 2 workers, the demo jobs, audit read back; then down
#   scripts/containers.sh clean         remove leftover test containers/networks, the images, the cache
#
# image-test and compose-test run deps, base and build first (each a no-op when already done).
# Env (defaults): CODEQ_CONTAINERS_WORK /var/tmp/codeq-containers (cache and containers.conf),
#   CONTAINERS_CONF (set: used as is; unset: $CODEQ_CONTAINERS_WORK/containers.conf),
#   CODEQ_COMPOSE_PORT 19092 (the broker published on 127.0.0.1 for the compose test),
#   CODEQ_COMPOSE_PROJECT codeq-ctest, KAFKA_VERSION 4.1.2, CODEQ_SOURCE_DIR (the tree to build).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SRC=${CODEQ_SOURCE_DIR:-$(cd "$here/.." && pwd)}
WORK=${CODEQ_CONTAINERS_WORK:-/var/tmp/codeq-containers}
KVER=${KAFKA_VERSION:-4.1.2}
KCACHE=${KAFKA_CACHE:-${HOME:-/tmp}/.cache/codeq-kafka}/$KVER
PORT=${CODEQ_COMPOSE_PORT:-19092}
PROJECT=${CODEQ_COMPOSE_PROJECT:-codeq-ctest}
IMG=localhost/codeq:dev
KIMG=localhost/codeq-kafka:$KVER
BASE=docker.io/library/debian:12
RUNID=codeq-test-$$
RUN_OPTS=()

# The narrowest settings that pass image-test on this host (cgroup v1; docs/containers.md): every
# capability dropped, then SYS_ADMIN (namespaces, mounts, pivot_root, the entrypoint's cgroup
# remount), MKNOD (the job's private /dev), CHOWN + DAC_OVERRIDE (the job's staging dirs, owned
# by its uid), SETUID + SETGID (the job's uid/gid, setgroups), SETPCAP (the job's bounding-set
# drop). /run/codeq is shared with the host so every codeq process agrees on job uids.
CAPS=(--cap-drop ALL --cap-add SYS_ADMIN --cap-add MKNOD --cap-add CHOWN --cap-add DAC_OVERRIDE
  --cap-add SETUID --cap-add SETGID --cap-add SETPCAP)
NARROW=("${CAPS[@]}" -v /run/codeq:/run/codeq:rw)

log() { echo "codeq: containers: $*" >&2; }
die() { echo "codeq: containers: $*" >&2; exit 1; }
phase_t0=0
phase() { phase_t0=$SECONDS; log "[$1] ..."; }
phase_done() { log "[$1] done in $((SECONDS - phase_t0)) s"; }

[ "$(id -u)" -eq 0 ] || die "run as root (rootful podman: the sandbox needs real capabilities)"
case $WORK in /*) ;; *) die "CODEQ_CONTAINERS_WORK must be an absolute path, got '$WORK'" ;; esac
[[ $PORT =~ ^[0-9]+$ ]] || die "CODEQ_COMPOSE_PORT must be a number, got '$PORT'"
[ -f "$SRC/Dockerfile" ] || die "no Dockerfile in $SRC (set CODEQ_SOURCE_DIR)"
mkdir -p "$WORK"

# One deps/base/build at a time (ctest may start both container tests at once).
locked() {
  local fd
  exec {fd}>"$WORK/.lock"
  flock -w 1200 "$fd" || die "another containers.sh held $WORK/.lock for 20 min"
  "$@"
  exec {fd}>&-
}

# ------------------------------------------------------------------------------------------ deps
# crun refuses this VM's hybrid cgroup layout (v2 with hugetlb); podman's default rlimits exceed
# the hard limits here (no CAP_SYS_RESOURCE): pin runc and rlimits that fit (the current hard ones).
write_conf() {
  local nofile nproc
  nofile=$(ulimit -Hn); nproc=$(ulimit -Hu)
  [ "$nofile" = unlimited ] && nofile=1048576
  [ "$nproc" = unlimited ] && nproc=1048576
  [ "$nofile" -gt 1048576 ] && nofile=1048576
  [ "$nproc" -gt 32768 ] && nproc=32768
  cat >"$WORK/containers.conf.tmp" <<EOF
# Written by scripts/containers.sh deps.
[containers]
default_ulimits = ["nofile=$nofile:$nofile", "nproc=$nproc:$nproc"]
[engine]
runtime = "runc"
[network]
network_backend = "netavark"
EOF
  mv "$WORK/containers.conf.tmp" "$WORK/containers.conf"
}

setup_env() {
  [ -f "$WORK/containers.conf" ] || write_conf
  export CONTAINERS_CONF=${CONTAINERS_CONF:-$WORK/containers.conf}
}

do_deps() {
  local p missing=()
  for p in podman runc netavark aardvark-dns iptables podman-compose debootstrap; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  if [ "${#missing[@]}" -gt 0 ]; then
    log "installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    timeout 600 apt-get update -qq
    timeout 900 apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
  write_conf
  setup_env
  timeout 60 podman info >/dev/null 2>&1 ||
    die "podman info fails with CONTAINERS_CONF=$CONTAINERS_CONF: $(timeout 60 podman info 2>&1 | tail -3)"
  log "deps ok (CONTAINERS_CONF=$CONTAINERS_CONF; export it to use podman by hand)"
}

# ------------------------------------------------------------------------------------------ base
# No registry is reachable from CI: debian:12 is built with debootstrap from the Debian mirror
# this host's apt already uses, and tagged as docker.io/library/debian:12 so FROM debian:12 finds
# it locally (builds use --pull=never).
apt_uri() {   # $1 = debian | debian-security
  grep -hoE "^(deb|URIs:) +[a-z]+://[^ ]+/$1/?( |\$)" /etc/apt/sources.list /etc/apt/sources.list.d/* \
    2>/dev/null | awk '{print $2}' | head -1 || true
}

do_base() {
  setup_env
  if podman image exists "$BASE"; then log "base $BASE cached"; return 0; fi
  command -v debootstrap >/dev/null || die "debootstrap missing (run: $0 deps)"
  local mirror security root=$WORK/rootfs
  mirror=$(apt_uri debian); security=$(apt_uri debian-security)
  [ -n "$mirror" ] || die "no Debian mirror found in /etc/apt/sources.list{,.d/*}"
  [ -n "$security" ] || security=${mirror%/debian*}/debian-security
  rm -rf "$root"
  log "debootstrap bookworm from $mirror (about a minute)"
  timeout 900 debootstrap --variant=minbase bookworm "$root" "$mirror" >"$WORK/debootstrap.log" 2>&1 ||
    { tail -20 "$WORK/debootstrap.log" >&2; die "debootstrap failed (log: $WORK/debootstrap.log)"; }
  rm -f "$root/etc/apt/sources.list"
  printf 'Types: deb\nURIs: %s\nSuites: bookworm bookworm-updates\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n\nTypes: deb\nURIs: %s\nSuites: bookworm-security\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
    "$mirror" "$security" >"$root/etc/apt/sources.list.d/debian.sources"
  rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
  tar --numeric-owner -C "$root" -c . | podman import --change 'CMD ["bash"]' - localhost/debian:12 >/dev/null
  podman tag localhost/debian:12 "$BASE"
  rm -rf "$root"
  log "base $BASE built: $(podman image inspect --format '{{.Size}}' "$BASE" | numfmt --to=si)B"
}

# ----------------------------------------------------------------------------------------- build
img_size() { podman image inspect --format '{{.Size}}' "$1" | numfmt --to=si; }

do_build() {
  setup_env
  podman image exists "$BASE" || die "no base image $BASE (run: $0 base)"
  local t0=$SECONDS ctx=$WORK/kafka-ctx fwd
  fwd=$(cat /proc/sys/net/ipv4/ip_forward)   # build containers' networking turns it on
  log "building $IMG from $SRC/Dockerfile (layers cached)"
  timeout 1800 podman build --pull=never --layers -t "$IMG" -f "$SRC/Dockerfile" "$SRC" \
    >"$WORK/build-codeq.log" 2>&1 ||
    { tail -40 "$WORK/build-codeq.log" >&2; die "podman build $IMG failed (log: $WORK/build-codeq.log)"; }
  log "$IMG: $(img_size "$IMG")B, $((SECONDS - t0)) s"
  t0=$SECONDS
  KAFKA_VERSION=$KVER bash "$SRC/scripts/kafka.sh" fetch >/dev/null ||
    die "could not resolve the Kafka $KVER jars (scripts/kafka.sh fetch)"
  [ -d "$KCACHE/lib" ] || die "no jars in $KCACHE/lib after scripts/kafka.sh fetch"
  rm -rf "$ctx" && mkdir -p "$ctx"
  cp -a "$KCACHE/lib" "$ctx/lib"
  cp "$SRC"/scripts/kafka/{server.properties,log4j2.properties,log4j2-tools.properties} "$ctx/"
  cp "$SRC"/tests/container/kafka/{Dockerfile,entrypoint.sh} "$ctx/"
  timeout 1800 podman build --pull=never --layers -t "$KIMG" "$ctx" >"$WORK/build-kafka.log" 2>&1 ||
    { tail -40 "$WORK/build-kafka.log" >&2; die "podman build $KIMG failed (log: $WORK/build-kafka.log)"; }
  log "$KIMG: $(img_size "$KIMG")B, $((SECONDS - t0)) s"
  [ "$(cat /proc/sys/net/ipv4/ip_forward)" = "$fwd" ] || echo "$fwd" >/proc/sys/net/ipv4/ip_forward
}

prepare() {
  phase deps; locked do_deps; phase_done deps
  phase base; locked do_base; phase_done base
  phase build; locked do_build; phase_done build
}

# ------------------------------------------------------------------------------------ image-test
cleanup_runid() {
  local ids
  ids=$(podman ps -aq --filter "label=codeq.test=$RUNID" 2>/dev/null || true)
  [ -z "$ids" ] || timeout 120 podman rm -f -t 0 $ids >/dev/null 2>&1 || true
  return 0
}

# check_json FILE EXPECTED_STATUS NAME: the result is one JSON object with that status and the
# full sandbox profile.
check_json() {
  python3 - "$1" "$2" "$3" <<'PY'
import json, sys
path, want, name = sys.argv[1:4]
text = open(path).read().strip()
try:
    r = json.loads(text.splitlines()[-1])
except Exception as e:
    sys.exit(f"{name}: no JSON result ({e}): {text[-400:]!r}")
got, prof = r.get("status"), r.get("sandbox_profile")
if got != want or prof != "full":
    sys.exit(f"{name}: status {got!r} profile {prof!r}, want {want!r} 'full': {text[-600:]}")
PY
}

# run_job ISOLATION FILE EXPECTED [CODEQ-RUN-ARGS...]: one `codeq run --json -` in a fresh
# container with the narrow settings (RUN_OPTS overrides them), the program on stdin.
run_job() {
  local iso=$1 file=$2 want=$3 name out rc=0 opts=("${NARROW[@]}")
  shift 3
  [ "${#RUN_OPTS[@]}" -eq 0 ] || opts=("${RUN_OPTS[@]}")
  name=$(basename "$file" .py)
  out=$WORK/it-$iso-$name.json
  timeout 120 podman run --rm -i --label "codeq.test=$RUNID" --network none "${opts[@]}" "$IMG" \
    run --json --isolation "$iso" "$@" - <"$file" >"$out" 2>"$out.err" || rc=$?
  [ "$rc" -ne 124 ] || die "image-test: $iso $name: no answer within 120 s"
  check_json "$out" "$want" "image-test: $iso $name (exit $rc, stderr: $(tail -c 300 "$out.err"))" ||
    die "image-test: $iso $name: wrong result"
  log "image-test: $iso $name -> $want${RUN_OPTS[0]:+ (${RUN_OPTS[0]})}"
}

# fail_closed WHAT PODMAN-ARGS...: `codeq worker` in such a container exits non-zero on its own.
fail_closed() {
  local what=$1 rc=0 out=$WORK/it-failclosed.txt
  shift
  timeout 60 podman run --rm --label "codeq.test=$RUNID" --network none "$@" "$IMG" \
    worker -b 127.0.0.1:1 >"$out" 2>&1 || rc=$?
  [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] ||
    die "image-test: a worker with $what did not refuse to start (exit $rc): $(tail -3 "$out")"
  log "image-test: worker with $what refuses to start (exit $rc): $(grep -m1 'codeq' "$out" | cut -c1-160)"
}

do_image_test() {
  prepare
  setup_env
  trap cleanup_runid EXIT
  mkdir -p /run/codeq
  phase image-test
  local iso f bomb=$WORK/membomb.py
  printf 'x = bytearray(500 * 2**20)\nprint(len(x))\n' >"$bomb"
  for iso in zygote exec; do
    for f in hello:ok primes:ok error:error rejected:rejected timeout:timeout; do
      run_job "$iso" "$SRC/examples/${f%%:*}.py" "${f#*:}"
    done
    run_job "$iso" "$bomb" memory_limit
  done
  # The data policy's numpy is in the image, and a file the job leaves comes back as an artifact.
  printf 'import numpy as np\nopen("out.txt", "w").write(str(int(np.arange(5).sum())))\n' >"$WORK/numpy.py"
  run_job zygote "$WORK/numpy.py" ok --policy data
  python3 -c 'import json, sys; r = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1]);
a = [x for x in r.get("artifacts") or [] if x.get("path") == "out.txt" and x.get("content") == "10"]
sys.exit(0 if a else "no artifact out.txt = 10: %r" % r.get("artifacts"))' "$WORK/it-zygote-numpy.json" ||
    die "image-test: numpy job: artifact missing"
  # The simple fallback: privileged (the entrypoint then has nothing to remount).
  local -a RUN_OPTS=(--privileged -v /run/codeq:/run/codeq:rw)
  run_job zygote "$SRC/examples/hello.py" ok
  run_job exec "$bomb" memory_limit
  RUN_OPTS=()
  # Fail closed: a worker whose cgroup stays read-only (entrypoint remount off), or that lacks
  # SYS_ADMIN, must refuse to start instead of running jobs with a layer missing.
  fail_closed "read-only cgroup" -e CODEQ_CGROUP_REMOUNT=0 "${NARROW[@]}"
  fail_closed "no SYS_ADMIN" --cap-drop ALL --cap-add MKNOD --cap-add CHOWN --cap-add DAC_OVERRIDE \
    --cap-add SETUID --cap-add SETGID --cap-add SETPCAP -v /run/codeq:/run/codeq:rw
  phase_done image-test
}

# ---------------------------------------------------------------------------------- compose-test
COMPOSE=(podman-compose -p "$PROJECT" -f "$SRC/compose.yaml" -f "$SRC/tests/container/compose.test.yaml")
ip_forward_before=

compose_down() {
  local ids
  timeout 120 "${COMPOSE[@]}" down -t 5 >"$WORK/compose-down.log" 2>&1 || true
  ids=$(podman ps -aq --filter "label=io.podman.compose.project=$PROJECT" 2>/dev/null || true)
  [ -z "$ids" ] || timeout 120 podman rm -f -t 0 $ids >/dev/null 2>&1 || true
  cleanup_runid
  if podman network exists "${PROJECT}_default" 2>/dev/null; then
    timeout 60 podman network rm -f "${PROJECT}_default" >/dev/null 2>&1 || true
  fi
  if [ -n "$ip_forward_before" ] && [ "$(cat /proc/sys/net/ipv4/ip_forward)" != "$ip_forward_before" ]; then
    echo "$ip_forward_before" >/proc/sys/net/ipv4/ip_forward || true
  fi
  return 0
}

# wait_for SECONDS WHAT COMMAND...: poll COMMAND once a second until it succeeds.
wait_for() {
  local limit=$1 what=$2 t0=$SECONDS
  shift 2
  until "$@" >/dev/null 2>&1; do
    [ $((SECONDS - t0)) -lt "$limit" ] || return 1
    sleep 1
  done
  log "compose-test: $what after $((SECONDS - t0)) s"
}

cstate() { podman inspect --format '{{.State.Status}} {{.State.ExitCode}}' "$1" 2>/dev/null; }
exited_ok() { [ "$(cstate "$1")" = "exited 0" ]; }
broker_up() { kcat -b "127.0.0.1:$PORT" -L -m 5 2>/dev/null | grep -c 'topic "codeq.jobs"' >/dev/null; }
# both workers own partitions: each has logged a non-empty assignment ("assigned partitions [1@..").
# (grep -c reads everything: no SIGPIPE for the writer under pipefail.)
group_ready() {
  podman logs "${PROJECT}_worker_1" 2>&1 | grep -c 'assigned partitions \[[0-9]' >/dev/null &&
    podman logs "${PROJECT}_worker_2" 2>&1 | grep -c 'assigned partitions \[[0-9]' >/dev/null
}

do_compose_test() {
  prepare
  setup_env
  command -v kcat >/dev/null || die "kcat missing (run scripts/deps.sh)"
  if (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; then
    die "127.0.0.1:$PORT is in use (set CODEQ_COMPOSE_PORT to a free port)"
  fi
  ip_forward_before=$(cat /proc/sys/net/ipv4/ip_forward)
  trap compose_down EXIT
  compose_down
  mkdir -p /run/codeq
  local t_all=$SECONDS
  export CODEQ_COMPOSE_PORT=$PORT

  phase compose-up
  timeout 300 "${COMPOSE[@]}" up -d --no-build >"$WORK/compose-up.log" 2>&1 ||
    { tail -30 "$WORK/compose-up.log" >&2; die "compose-test: podman-compose up failed"; }
  phase_done compose-up

  phase compose-ready
  wait_for 180 "topics created" exited_ok "${PROJECT}_topics_1" ||
    { podman logs --tail 20 "${PROJECT}_topics_1" >&2 || true; podman logs --tail 30 "${PROJECT}_kafka_1" >&2 || true
      die "compose-test: topics did not finish with exit 0 in 180 s ($(cstate "${PROJECT}_topics_1"))"; }
  log "compose-test: topics restarts: $(podman inspect --format '{{.RestartCount}}' "${PROJECT}_topics_1")"
  wait_for 60 "broker answers on 127.0.0.1:$PORT" broker_up ||
    die "compose-test: broker on 127.0.0.1:$PORT has no codeq.jobs topic after 60 s"
  local w
  for w in 1 2; do
    [ "$(cstate "${PROJECT}_worker_$w" | cut -d' ' -f1)" = running ] ||
      { podman logs --tail 30 "${PROJECT}_worker_$w" >&2 || true; die "compose-test: worker_$w is not running ($(cstate "${PROJECT}_worker_$w"))"; }
  done
  wait_for 120 "both workers own partitions" group_ready ||
    { podman logs --tail 20 "${PROJECT}_worker_1" >&2; podman logs --tail 20 "${PROJECT}_worker_2" >&2
      die "compose-test: the two workers did not both get partitions in 120 s"; }
  phase_done compose-ready

  phase compose-jobs
  # The five demo jobs plus 16 quick ones, so that both workers (2 of 4 partitions each) get work.
  local jobs=$WORK/compose-jobs n out=$WORK/compose-results.jsonl rc
  rm -rf "$jobs" && mkdir -p "$jobs"
  cp "$SRC"/examples/*.py "$jobs/"
  rm -f "$jobs/agent_loop.py"  # a client program (it submits jobs itself), not a job
  for n in $(seq -w 1 16); do printf 'print("spread %s")\n' "$n" >"$jobs/spread$n.py"; done
  timeout 120 podman run -d --name "${PROJECT}_submit" --label "codeq.test=$RUNID" --network "${PROJECT}_default" \
    -v "$jobs:/jobs:ro" "$IMG" submit -b kafka:9092 --timeout 90 $(cd "$jobs" && ls *.py | sed 's|^|/jobs/|') >/dev/null
  rc=$(timeout 150 podman wait "${PROJECT}_submit" 2>/dev/null) ||
    { podman rm -f -t 0 "${PROJECT}_submit" >/dev/null 2>&1; die "compose-test: codeq submit did not finish in 150 s"; }
  podman logs "${PROJECT}_submit" >"$out" 2>"$out.err" || true
  podman rm -f -t 0 "${PROJECT}_submit" >/dev/null 2>&1 || true
  [ "$rc" = 0 ] || { tail -20 "$out.err" >&2; die "compose-test: codeq submit exited $rc"; }
  python3 - "$out" "$jobs" <<'PY' || die "compose-test: results do not match"
import json, os, sys
out, jobs = sys.argv[1:3]
want = {"hello": "ok", "primes": "ok", "error": "error", "rejected": "rejected", "timeout": "timeout"}
files = sorted(f[:-3] for f in os.listdir(jobs) if f.endswith(".py"))
rs = [json.loads(l) for l in open(out) if l.strip().startswith("{")]
if len(rs) != len(files) or len({r.get("id") for r in rs}) != len(files):
    sys.exit(f"{len(rs)} results ({len({r.get('id') for r in rs})} ids) for {len(files)} jobs")
bad, workers = [], {}
for r in rs:
    name = (r.get("id") or "").rsplit(".py-", 1)[0]    # codeq submit: id = FILE-<hash>
    if name not in files:
        bad.append(f"result for an unknown job {r.get('id')!r}")
        continue
    exp = want.get(name, "ok")
    if r.get("status") != exp or r.get("sandbox_profile") != "full":
        bad.append(f"{name or r.get('id')}: {r.get('status')}/{r.get('sandbox_profile')} want {exp}")
    workers[r.get("worker")] = workers.get(r.get("worker"), 0) + 1
if bad:
    sys.exit("; ".join(bad))
if len(workers) < 2 or None in workers:
    sys.exit(f"results from workers {workers}: want both replicas")
print(f"codeq: containers: compose-test: {len(rs)} results as expected, by workers {workers}",
      file=sys.stderr)
PY
  phase_done compose-jobs

  phase compose-audit
  local audit=$WORK/compose-audit.jsonl
  timeout 60 kcat -C -b "127.0.0.1:$PORT" -t codeq.audit -o beginning -e -q \
    -X isolation.level=read_committed >"$audit" 2>"$audit.err" ||
    { cat "$audit.err" >&2; die "compose-test: could not read codeq.audit with read_committed"; }
  python3 - "$audit" "$out" <<'PY' || die "compose-test: audit trail incomplete"
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
ids = {json.loads(l)["id"] for l in open(sys.argv[2]) if l.strip().startswith("{")}
kinds = {}
for e in ev:
    kinds.setdefault(e.get("job_id"), set()).add(e.get("event"))
# every job was received and then finished (ran) or rejected (never ran), nothing else missing
missing = [i for i in ids if "received" not in kinds.get(i, ())
           or not kinds.get(i, set()) & {"finished", "rejected"}]
if not ev or missing:
    sys.exit(f"{len(ev)} audit events; jobs without received+finished/rejected: {sorted(missing)[:5]}")
print(f"codeq: containers: compose-test: {len(ev)} audit events (read_committed) cover all "
      f"{len(ids)} jobs", file=sys.stderr)
PY
  phase_done compose-audit

  phase compose-down
  compose_down
  trap - EXIT
  local left
  left=$(podman ps -aq --filter "label=io.podman.compose.project=$PROJECT")
  [ -z "$left" ] || die "compose-test: containers left after down: $left"
  ! podman network exists "${PROJECT}_default" || die "compose-test: network ${PROJECT}_default left"
  phase_done compose-down
  log "compose-test: passed in $((SECONDS - t_all)) s"
}

# ----------------------------------------------------------------------------------------- clean
do_clean() {
  setup_env
  compose_down
  podman rmi -f "$IMG" "$KIMG" >/dev/null 2>&1 || true
  [ "${1:-}" = --all ] && podman rmi -f "$BASE" localhost/debian:12 >/dev/null 2>&1 || true
  podman image prune -f >/dev/null 2>&1 || true
  rm -rf "$WORK/kafka-ctx" "$WORK/rootfs" "$WORK"/it-* "$WORK"/compose-*
  log "clean: test containers and the codeq images removed${1:+ (and the debian:12 base)}"
}

cmd=${1:-}
[ $# -gt 0 ] && shift
trap 'exit 1' INT TERM          # so that the EXIT traps tear down what a test started
t_start=$SECONDS
case $cmd in
  deps) phase deps; do_deps; phase_done deps ;;
  base) setup_env; phase base; locked do_base; phase_done base ;;
  build) setup_env; phase build; locked do_build; phase_done build ;;
  image-test) do_image_test ;;
  compose-test) do_compose_test ;;
  clean) do_clean "$@" ;;
  *) die "usage: $0 deps|base|build|image-test|compose-test|clean [--all]" ;;
esac
log "$cmd: ok in $((SECONDS - t_start)) s"
