#!/bin/bash
# On the host: scripts/cgroup2-vm.sh's watchdog (watch.sh in the guest), which the other
# cgroup2 tests lean on when a guest stalls. Three guests, each made to show one case:
#   stall    the command binds a FIFO over the control file the watchdog's 9p probe reads, so
#            the probe never returns, as a stalled 9p share leaves it: the watchdog must report
#            the stall with every task's stack, the host must end that guest and run the
#            command again on a fresh one, whose status is the script's (0 here)
#   silence  the command stops the watchdog (SIGSTOP): its console lines stop, as they would
#            if the guest's kernel froze, while other lines still reach the console every 5 s,
#            as a frozen kernel's soft-lockup reports do; the same end and second run must
#            follow (before 2026-12-05 those other lines kept such a guest "alive")
#   limit    a command that outlives -t: status 124, with the watchdog's dump (taken near the
#            limit) and QEMU's threads on the host in the report
# The second run of the first two sees a marker in a shared directory and exits 0 at once.
# Exit status: the number of failed checks.
set -u
vm=${CODEQ_SOURCE_DIR:?}/scripts/cgroup2-vm.sh
m=$(mktemp -d /tmp/codeq-vm-watchdog.XXXXXX)
trap 'rm -rf "$m"' EXIT
failed=0
# Its own stalls are on purpose: kept apart from the test run's record (scripts/test.sh).
export CODEQ_VM_STALL_LOG=$m/stalls.log
check() { if grep -q -- "$2" "$m/$3"; then echo "PASS: $1"; else echo "FAIL: $1 (no '$2' in $3)"; failed=$((failed + 1)); fi; }
status() { if [ "$2" = "$3" ]; then echo "PASS: $1: exit $2"; else echo "FAIL: $1: exit $2, not $3"; failed=$((failed + 1)); fi; }

# Short bounds (the defaults are 120 and 180 s) so that each case takes about a minute.
VMPROBE_STALL_SECS=20 bash "$vm" -s "$m" -t 300 -- sh -c '
  if [ -e '"$m"'/stall ]; then echo "second run"; exit 0; fi
  touch '"$m"'/stall; mkfifo /run/stall.fifo
  mount --bind /run/stall.fifo /run/vmprobe/dump_at && echo "first run: probe blocked"
  sleep 600' > "$m/stall.out" 2> "$m/stall.err"
status stall $? 0
check "stall: the first run began" "first run: probe blocked" stall.out
check "stall: the watchdog reported it" "codeq: vm: the guest's 9p shares stopped answering" stall.err
check "stall: with each task's kernel stack" "^--- task .*sleep 600" stall.err
check "stall: and QEMU's threads" "^--- host thread .*(qemu-system-x86)" stall.err
check "stall: the command ran again" "running the command again from its start" stall.err
check "stall: to its end" "second run" stall.out
check "stall: recorded for the end of the test run" "stalled, ran again: sh -c" stalls.log

VMPROBE_SILENT_SECS=40 bash "$vm" -s "$m" -t 300 -- sh -c '
  if [ -e '"$m"'/silence ]; then echo "second run"; exit 0; fi
  touch '"$m"'/silence; pkill -STOP -f "vmprobe-bin/[w]atch.sh" && echo "first run: watchdog stopped"
  while :; do echo "watchdog: BUG: soft lockup (a test line)" > /dev/console; sleep 5; done' \
  > "$m/silence.out" 2> "$m/silence.err"
status silence $? 0
check "silence: the first run began" "first run: watchdog stopped" silence.out
check "silence: the host saw it" "codeq: vm: the guest.s watchdog wrote nothing for 40s" silence.err
check "silence: the command ran again" "running the command again from its start" silence.err
check "silence: to its end" "second run" silence.out

bash "$vm" -s none -t 75 -- sh -c 'echo "running"; sleep 600' > "$m/limit.out" 2> "$m/limit.err"
status limit $? 124
check "limit: reported" "codeq: vm: timed out after 75s" limit.err
check "limit: with the watchdog's dump" "^--- task .*sleep 600" limit.err
check "limit: and QEMU's threads" "^--- host thread .*(qemu-system-x86)" limit.err
[ $failed = 0 ] || { echo "--- stderr of the three guests:"; cat "$m"/*.err; }
echo "vm_watchdog: $failed failed"
exit $failed
