#!/bin/sh
# Runs inside the cgroup v2 guest (scripts/cgroup2-vm.sh): one suite of codeq's tests, named by
# $1, against the host's build tree (read-only over 9p). Exit status: the suite's.
# Under software emulation a guest process runs ~40x slower than on the host: wall limits that
# a job must do work within are scaled by CODEQ_TEST_TIME_SCALE (the tests read it).
set -u
src=${CODEQ_SOURCE_DIR:?}
build=${CODEQ_BUILD_DIR:?}
export CODEQ_BIN=$build/codeq CODEQ_TEST_TIME_SCALE=${CODEQ_TEST_TIME_SCALE:-10}
py=/usr/bin/python3
t0=$(cut -d' ' -f1 /proc/uptime)
echo "codeq: guest: $(uname -r), $(stat -f -c %T /sys/fs/cgroup) at /sys/fs/cgroup, in $(cat /proc/self/cgroup)"
[ "$(stat -f -c %T /sys/fs/cgroup)" = cgroup2fs ] && ! grep -q ' cgroup ' /proc/mounts ||
  { echo "codeq: guest: not a pure cgroup v2 host" >&2; exit 1; }
suite=$1; shift

# The VM is killed at its limit (-t, CODEQ_GUEST_LIMIT_S) without a word from the suite. A
# minute before that (counted from the guest's boot), the Python suites print every thread's
# stack (codeq_test.py, CODEQ_TEST_DUMP_AFTER_S); 20 s later the VM's watchdog
# (scripts/cgroup2-vm.sh) writes every task's state, wait channel and kernel stack, from tmpfs to
# the console, so also in a guest whose 9p shares or virtio ports stalled. Python writes
# unbuffered, so nothing printed before is lost either.
export PYTHONUNBUFFERED=1
dump_after=$(awk -v d=$(( ${CODEQ_GUEST_LIMIT_S:-0} - 60 )) -v u="$t0" 'BEGIN { printf "%d", d - u }')
[ "$dump_after" -gt 0 ] && export CODEQ_TEST_DUMP_AFTER_S=$dump_after
case $suite in
  units)
    rc=0
    for t in test_sandbox test_sandbox_confine test_sandbox_zygote; do
      "$build/$t" || rc=1
    done ;;
  *.py)
    $py "$src/tests/integration/$suite" "$@"; rc=$? ;;
  *)
    sh "$src/tests/cgroup2/$suite" "$@"; rc=$? ;;
esac
echo "codeq: guest: $suite ended $rc after $(echo "$(cut -d' ' -f1 /proc/uptime) $t0" | awk '{printf "%.0f", $1 - $2}') s"
exit $rc
