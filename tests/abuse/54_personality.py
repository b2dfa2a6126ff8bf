# personality(2): READ_IMPLIES_EXEC or ADDR_NO_RANDOMIZE would weaken the memory protections
# of everything the job starts next; only the default persona and the query are allowed.
# expect: status in ok,error,seccomp_violation
r, err = sc(135, 0xffffffff)  # the query: allowed
print("persona", hex(r), err, flush=True)
for flag, name in ((0x0400000, "READ_IMPLIES_EXEC"), (0x0040000, "ADDR_NO_RANDOMIZE")):
    r, err = sc(135, flag)
    if r != -1:
        sc(135, 0)
        escaped(f"personality-{name}")
    else:
        blocked("personality", f"{name} {err}")
