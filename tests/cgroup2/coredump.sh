#!/bin/sh
# In a throw-away guest (it changes the kernel's global core_pattern, which no test may do on a
# shared host): a crashing job must never reach the host's core_pattern pipe helper
# (systemd-coredump, apport), also with fs.suid_dumpable=2 (issue 11, F). The helper here is a
# script that appends a line to a marker file.
#   control   an unconfined crashing python reaches the helper, with RLIMIT_CORE 0 too (the
#             kernel ignores the limit for pipes, so the test can fail); with RLIMIT_CORE 1 it
#             does not (the value fs/coredump.c reserves to stop recursive dumps)
#   jobs      through codeq run, both isolation modes: a ctypes segfault, os.abort(), a job that
#             first sets RLIMIT_CORE to 0 and PR_SET_DUMPABLE to 1, and a seccomp kill (the
#             filter's SIGSYS dumps core too); none may reach the helper
# Run by tests/cgroup2/guest.sh (ctest cgroup2_coredump). Exit 0 only if every check passed.
set -u
B=${CODEQ_BIN:?}
POLICY="--policy ${CODEQ_SOURCE_DIR:?}/tests/abuse/_policy.json"  # ctypes reaches the sandbox
SCALE=${CODEQ_TEST_TIME_SCALE:-1}
passed=0 failed=0
pass() { echo "PASS: $*"; passed=$((passed + 1)); }
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }
field() { /usr/bin/python3 -c 'import json,sys; r=json.load(sys.stdin); print(r[sys.argv[1]])' "$1" 2>/dev/null; }
helper=/tmp/core-helper marker=/tmp/core-marker
cat > $helper <<'HELPER'
#!/bin/sh
echo "pid $1 signal $2" >> /tmp/core-marker
cat > /dev/null
HELPER
chmod 755 $helper
old_pattern=$(cat /proc/sys/kernel/core_pattern)
echo "|$helper %p %s" > /proc/sys/kernel/core_pattern
echo 2 > /proc/sys/fs/suid_dumpable
echo "core_pattern: $(cat /proc/sys/kernel/core_pattern), suid_dumpable: $(cat /proc/sys/fs/suid_dumpable)"
# the helper runs asynchronously: wait up to $1 s for the marker
marker_within() { i=0; while [ $i -lt "$1" ]; do [ -s $marker ] && return 0; sleep 1; i=$((i + 1)); done; return 1; }
CRASH='import ctypes; ctypes.string_at(0)'

rm -f $marker
(ulimit -c 0; /usr/bin/python3 -c "$CRASH") 2>/dev/null
if marker_within $((10 * SCALE)); then pass "control: an unconfined crash with RLIMIT_CORE 0 reached the helper ($(cat $marker))"
else fail "control: an unconfined crash did not reach the helper: the test cannot tell"; fi
rm -f $marker
/usr/bin/python3 -c "import resource; resource.setrlimit(resource.RLIMIT_CORE, (1, 1)); $CRASH" 2>/dev/null
if marker_within $((5 * SCALE)); then fail "control: RLIMIT_CORE 1 did not stop the helper ($(cat $marker))"
else pass "control: an unconfined crash with RLIMIT_CORE 1 did not reach the helper"; fi

printf '%s\n' "$CRASH" > /tmp/segv.py
printf 'import os\nos.abort()\n' > /tmp/abort.py
cat > /tmp/lower.py <<'PY'
import ctypes, resource
resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
print("prctl(PR_SET_DUMPABLE, 1):", ctypes.CDLL(None).prctl(4, 1, 0, 0, 0), flush=True)
ctypes.string_at(0)
PY
printf 'import ctypes\nctypes.CDLL(None).syscall(188, 0, 0, 0, 0, 0)\n' > /tmp/sigsys.py  # setxattr
# All eight crashes first, then one wait for the helper: it is started by the kernel while the
# crashing process dumps, so a line from any of them is there long before the wait ends (each
# line names the pid and signal). One wait instead of eight saves ~5 min of emulated guest.
rm -f $marker
for iso in exec zygote; do
  for job in segv:signal abort:signal lower:signal sigsys:seccomp_violation; do
    name=${job%%:*} want=${job#*:}
    out=$("$B" run --isolation $iso --zygote-start-ms $((10000 * SCALE)) $POLICY --json /tmp/$name.py 2>/tmp/err)
    st=$(printf '%s' "$out" | field status) sig=$(printf '%s' "$out" | field signal)
    if [ "$st" != "$want" ]; then fail "$name ($iso): status '$st', want $want; $(printf '%s' "$out" | head -c 400) $(head -c 300 /tmp/err)"
    else pass "$name ($iso): $st $sig"; fi
  done
done
if marker_within $((5 * SCALE)); then fail "jobs: crashes reached the helper: $(tr '\n' ';' < $marker)"
else pass "jobs: none of the 8 crashes reached the helper"; fi
echo "kernel log: $(dmesg 2>/dev/null | grep -c 'RLIMIT_CORE') dumps aborted for RLIMIT_CORE 1"
echo "$old_pattern" > /proc/sys/kernel/core_pattern
echo "coredump: $passed passed, $failed failed"
[ $failed = 0 ] && [ $passed -gt 0 ]
