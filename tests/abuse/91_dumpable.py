# Making itself dumpable: a core_pattern socket (`@/path`, Linux 6.16) takes the whole memory of
# any dumpable process that crashes, whatever RLIMIT_CORE says. prctl(PR_SET_DUMPABLE, 1) is
# refused in both modes, and a zygote job (no execve) is non-dumpable from its start, also where
# fs.suid_dumpable is 2. An exec-mode job is dumpable after its execve; it is refused while the
# host's pattern is a socket (tests/unit/test_sandbox.c, test_core_pattern_socket).
# expect: status=ok
# expect: stdout-contains=DUMPABLE-AFTER:1
# expect-zygote: status=ok
# expect-zygote: stdout-contains=DUMPABLE-AT-START:0 DUMPABLE-AFTER:0
PRCTL, PR_GET_DUMPABLE, PR_SET_DUMPABLE = 157, 3, 4
start, _ = sc(PRCTL, PR_GET_DUMPABLE, 0, 0, 0, 0)
for value in (1, 2):
    r, err = sc(PRCTL, PR_SET_DUMPABLE, value, 0, 0, 0)
    if r == 0:
        escaped(f"set-dumpable-{value}")
    else:
        blocked(f"set-dumpable-{value}", err)
after, _ = sc(PRCTL, PR_GET_DUMPABLE, 0, 0, 0, 0)
print(f"DUMPABLE-AT-START:{start} DUMPABLE-AFTER:{after}", flush=True)
