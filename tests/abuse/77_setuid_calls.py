# Becoming root or another job's user again: setuid/setgid/setgroups/setresuid and capset
# all fail without capabilities.
# expect: status in ok,error,seccomp_violation
ct = imp("ctypes")
for name, fn in (("setuid0", lambda: os.setuid(0)), ("setgid0", lambda: os.setgid(0)),
                 ("setgroups0", lambda: os.setgroups([0])),
                 ("setresuid-other", lambda: os.setresuid(61001, 61001, 61001)),
                 ("seteuid0", lambda: os.seteuid(0))):
    try:
        fn()
        escaped(name)
    except OSError as e:
        blocked(name, ename(e.errno))
hdr = (ct.c_uint32 * 2)(0x20080522, 0)          # _LINUX_CAPABILITY_VERSION_3, self
data = (ct.c_uint32 * 6)(0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF)
r, err = sc(126, ct.byref(hdr), ct.byref(data))  # capset
if r == 0:
    escaped("capset-all")
else:
    blocked("capset", err)
if os.getuid() == 0 or os.geteuid() == 0:
    escaped("is-root")
