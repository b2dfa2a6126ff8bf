# bpf(2) and perf_event_open(2): kernel attack surface and side channels, denied.
# expect: status in ok,error,seccomp_violation
ct = imp("ctypes")
attr = (ct.c_uint32 * 30)(2, 4, 4, 1)  # BPF_MAP_TYPE_ARRAY, key 4, value 4, 1 entry
r, err = sc(321, 0, ct.byref(attr), ct.sizeof(attr))  # bpf(BPF_MAP_CREATE)
if r >= 0:
    escaped("bpf-map-create")
else:
    blocked("bpf", err)
pattr = (ct.c_uint8 * 128)()
pattr[0] = 1      # type PERF_TYPE_SOFTWARE
pattr[4] = 128    # size
r, err = sc(298, ct.byref(pattr), 0, -1, -1, 0)  # perf_event_open(cpu clock, self)
if r >= 0:
    escaped("perf_event_open")
else:
    blocked("perf_event_open", err)
