# Privileged knobs of the shared kernel: raising priority, reading the kernel log, setting the
# hostname, setting the clock, changing another process's scheduling. All EPERM.
# expect: status in ok,error,seccomp_violation
ct = imp("ctypes")
try:
    os.nice(-10)
    escaped("nice-negative")
except OSError as e:
    blocked("nice", ename(e.errno))
buf = ct.create_string_buffer(256)
r, err = sc(103, 3, ct.byref(buf), 256)  # syslog(SYSLOG_ACTION_READ_ALL)
if r >= 0:
    escaped("syslog-read")
else:
    blocked("syslog", err)
r, err = sc(170, ct.c_char_p(b"codeq-abuse"), 11)  # sethostname
if r == 0:
    escaped("sethostname")
else:
    blocked("sethostname", err)
try:
    os.setpriority(os.PRIO_PROCESS, 1, -5)
    escaped("setpriority-init")
except OSError as e:
    blocked("setpriority", ename(e.errno))
ts = (ct.c_long * 2)(int(__import__("time").time()), 0)
r, err = sc(227, 0, ct.byref(ts))  # clock_settime(CLOCK_REALTIME, now): harmless even if allowed
if r == 0:
    escaped("clock_settime")
else:
    blocked("clock_settime", err)
try:
    os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(50))
    escaped("realtime-scheduling")
except OSError as e:
    blocked("sched_setscheduler", ename(e.errno))
