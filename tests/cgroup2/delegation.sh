#!/bin/sh
# In the cgroup v2 guest: where codeq puts job cgroups, for each way a host hands it a cgroup
# (sandbox/sbx_cgroup2.c, docs/security-model.md "Deploying"). Each case runs, in both
# isolation modes, a job that prints its own /proc/self/cgroup and one that exceeds its
# memory limit (OOM detection from memory.events), and checks where the job was and that no
# job cgroup was left behind. A restarted service or container gets a new cgroup, so each
# mode runs in a fresh one (@ in the paths below).
#   root        codeq in the root cgroup: jobs under /codeq
#   delegated   alone in a service cgroup, as systemd's Delegate=yes leaves it: codeq moves
#               into <service>/codeq-worker, jobs under <service>/codeq
#   shared      a cgroup other processes share (a login scope): nothing is moved, jobs go
#               under the hierarchy's root, /codeq
#   container   a private cgroup namespace with its own cgroup2 mount, as a container
#               engine gives it: jobs under the container's cgroup, /codeq in its own view
set -u
B=${CODEQ_BIN:?}
M=/sys/fs/cgroup
# The programs read /proc: the abuse suite's policy (every rule off) lets them reach the sandbox.
POLICY="--policy ${CODEQ_SOURCE_DIR:?}/tests/abuse/_policy.json"
START_MS=$((10000 * ${CODEQ_TEST_TIME_SCALE:-1}))  # a zygote's start, scaled for emulation
passed=0 failed=0
pass() { echo "PASS: $*"; passed=$((passed + 1)); }
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }
printf 'print(open("/proc/self/cgroup").read().strip())\n' > /tmp/where.py
printf 'x = bytearray(200 * 2**20)\nprint(len(x))\n' > /tmp/oom.py
enable() { mkdir -p "$1" && echo "+memory +pids +cpu" > "$1/cgroup.subtree_control"; }
field() { /usr/bin/python3 -c 'import json,sys; r=json.load(sys.stdin); print(r[sys.argv[1]])' "$1" 2>/dev/null; }
say() { printf '%s' "$1"; } # not echo: dash's turns the \n in JSON strings into newlines
fresh() { CG=$slice/$name-$1.scope; export CG; mkdir -p "$M/$CG"; }
run() { # run ISO PROGRAM: codeq run through $RUNNER, which puts it into the fresh cgroup $M/$CG
  sh -c "$RUNNER" sh "$B" run --isolation "$1" --zygote-start-ms "$START_MS" $POLICY --json "$2" 2>/tmp/err; }

# case NAME SLICE WANT RUNNER: WANT is the job's expected parent ("@" = the run's cgroup).
case_run() {
  name=$1 slice=$2 want_t=$3 RUNNER=$4
  [ -n "$slice" ] && enable $M/$slice
  for iso in exec zygote; do
    fresh $iso-where; out=$(run $iso /tmp/where.py)
    want=$(echo "$want_t" | sed "s|@|/$CG|")
    st=$(say "$out" | field status) where=$(say "$out" | field stdout)
    case "$st:$where" in
      "ok:0::$want/job-"*) pass "$name ($iso): job in ${where#0::}" ;;
      *) fail "$name ($iso): status '$st', job in '$where', want 0::$want/job-*; $(say "$out" | head -c 600) $(head -c 300 /tmp/err)" ;;
    esac
    case $name in
      delegated) [ -d $M/$CG/codeq-worker ] && [ -d $M/$CG/codeq ] &&
        pass "$name ($iso): codeq moved into $CG/codeq-worker, jobs under $CG/codeq" ||
        fail "$name ($iso): no codeq-worker leaf or codeq parent in $CG" ;;
      shared) [ ! -e $M/$CG/codeq-worker ] && [ ! -e $M/$CG/codeq ] &&
        pass "$name ($iso): nothing made in the shared $CG" || fail "$name ($iso): codeq made a cgroup in the shared $CG" ;;
      container) [ -d $M/$CG/codeq ] && pass "$name ($iso): jobs inside the container's cgroup $CG" ||
        fail "$name ($iso): no $M/$CG/codeq" ;;
    esac
    fresh $iso-oom; out=$(run $iso /tmp/oom.py)
    st=$(say "$out" | field status)
    [ "$st" = memory_limit ] && pass "$name ($iso): memory bomb -> memory_limit" ||
      fail "$name ($iso): memory bomb -> '$st' $(say "$out" | head -c 600) $(head -c 300 /tmp/err)"
    left=$(find $M -name 'job-*' -type d | wc -l)
    [ "$left" = 0 ] && pass "$name ($iso): no job cgroup left" || fail "$name ($iso): $left job cgroups left"
  done
}

case_run root "" /codeq 'exec "$@"'
# exec: codeq is the only process of the service, as its main process is under systemd
case_run delegated ci.slice @/codeq 'echo $$ > '$M'/$CG/cgroup.procs && exec "$@"'
# no exec: this shell stays in the scope beside codeq
case_run shared user.slice /codeq 'echo $$ > '$M'/$CG/cgroup.procs && "$@"'
case_run container machine.slice /codeq 'echo $$ > '$M'/$CG/cgroup.procs &&
  exec unshare --cgroup --mount --propagation private sh -c "umount -l '$M' && mount -t cgroup2 cgroup2 '$M' && exec \"\$@\"" sh "$@"'

echo "delegation: $passed passed, $failed failed"
[ $failed = 0 ]
