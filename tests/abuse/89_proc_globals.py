# The host's kernel through /proc: its global files describe the host (cmdline, version,
# config, modules, symbols, /proc/sys) and count what every job does at once (meminfo, stat,
# loadavg, vmstat, interrupts, pressure), so two concurrent jobs could signal through them.
# The job's /proc must hold its process directories, self and thread-self, and nothing else,
# whatever the name; its own process directory must still work, and so must what Python reads
# about the machine (cpu count, page size, memory through sysinfo).
# expect: status=ok
# expect: stdout-contains=own-proc-ok
names = os.listdir("/proc")
extra = sorted(n for n in names if not n.isdigit() and n not in ("self", "thread-self"))
print("proc entries:", len(names), "others:", extra[:10])
for n in extra:
    escaped(f"proc-global-listed-{n}")
# Looked up by name too: a file that a listing hides may still open.
for path in ("cmdline", "version", "config.gz", "modules", "kallsyms", "sys/kernel/osrelease",
             "sys/kernel/random/boot_id", "sys/vm/overcommit_memory", "meminfo", "stat",
             "loadavg", "vmstat", "zoneinfo", "interrupts", "softirqs", "diskstats",
             "pressure/memory", "pressure/cpu", "schedstat", "uptime", "slabinfo", "buddyinfo",
             "cpuinfo", "sysvipc/shm", "locks", "keys", "timer_list",
             "kmsg", "kcore", "sysrq-trigger", "1/../meminfo", "self/../stat"):
    try:
        with open_("/proc/" + path, "rb") as f:
            data = f.read(256)
        escaped(f"proc-global-readable-{path}:{len(data)}")
    except OSError as e:
        blocked("proc-global", f"{path} {ename(e.errno)}")
with open_("/proc/self/status") as f:
    mine = [l for l in f if l.startswith("Pid:")]
with open_("/proc/self/net/dev") as f:
    f.read()
count, page, phys = os.cpu_count(), os.sysconf("SC_PAGE_SIZE"), os.sysconf("SC_PHYS_PAGES")
if mine and count and count >= 1 and page > 0 and phys > 0:
    print("own-proc-ok", mine[0].split()[1], count)
