/* sbx_rlimits.c: per-process resource limits, set in the job's main process before execve
 * and inherited by everything it starts (the init, our own code, has none of them).
 *
 * - Memory: the cgroup is the bound (sbx_cgroup*.c) — it counts real memory of the whole
 *   job, which is what users mean. RLIMIT_AS counts address space per process: Python
 *   threads reserve 8 MB stacks each, so at 50 MB it allowed about four threads. It is set
 *   only when there is no memory cgroup (profile "no-cgroup"), to memory_mb as before.
 * - CPU: the cgroup's total (polled by the parent, sbx_cgroup_cpu_over) ends the job at
 *   cpu_ms, for one process or many. RLIMIT_CPU counts whole seconds per process: without a
 *   cgroup it is the bound, soft ceil(cpu_ms/1000) s (SIGXCPU), hard 1 s later (SIGKILL, for
 *   a job that ignores SIGXCPU); with one it is a backstop one second further on. All of
 *   them end as SBX_TIMEOUT.
 * - RLIMIT_NPROC (pids): per real uid on the host; each running job has a uid of its own
 *   (sbx_user.c), so it is a per-job bound now, behind the pids cgroup.
 * - RLIMIT_FSIZE (file_mb): writes past it fail with EFBIG (Python ignores SIGXFSZ).
 * - RLIMIT_NOFILE (open_files).
 * - RLIMIT_CORE 1, not 0: a crash must reach neither a core file nor the host's core_pattern
 *   pipe helper (systemd-coredump, apport), which gets the dump whatever the limit except
 *   exactly 1 (fs/coredump.c: the value the kernel reserves to stop recursive dumps; a file
 *   dump also needs at least a page). The seccomp filter keeps the job from lowering it to 0
 *   (sbx_seccomp.c); tests/cgroup2/coredump.sh proves it, also with fs.suid_dumpable=2.
 * - A core_pattern socket (`@/path`, Linux 6.16) takes the dump whatever the limit, from any
 *   dumpable process. A zygote job is never dumpable (sbx_user.c, sbx_seccomp.c), but execve
 *   makes a process dumpable again whatever it was, so an exec-mode job is refused while the
 *   host's core_pattern is a socket (checked per job: the pattern can change at any time).
 * - What the worker's host allows its own processes is not the job's: a service unit with
 *   LimitNICE, LimitRTPRIO or LimitMEMLOCK=infinity would hand a job a higher priority than
 *   the worker's (RLIMIT_NICE), pinned pages of the host's page cache that no cgroup charges
 *   to it (mlock of /usr's libraries: RLIMIT_MEMLOCK) or whatever the host's queues allow. So
 *   these are fixed for every job: NICE and RTPRIO 0, MEMLOCK 64 KiB (as nsjail), MSGQUEUE
 *   the kernel's own default for a user (800 KiB), SIGPENDING 1024 queued signals.
 * Hard limits equal soft ones (except CPU); the job, without capabilities, cannot raise them.
 */
#include "sbx_int.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

static int sbx_rlimit(sbx_proc *p, int res, const char *name, rlim_t soft, rlim_t hard)
{
    struct rlimit rl = {.rlim_cur = soft, .rlim_max = hard};
    if (setrlimit(res, &rl) < 0)
        return sbx_child_fail(p, errno, "setrlimit(", name, ")", NULL);
    return 0;
}

uint64_t sbx_cpu_rlimit_s(const sbx_proc *p)
{
    return ((uint64_t)p->limits.cpu_ms + 999) / 1000 + (p->use_cgroup ? 1 : 0);
}

/* The limits that are the same for every job, whatever the host gives the worker. */
static int sbx_rlimits_fixed(sbx_proc *p)
{
    static const struct {
        int res;
        const char *name;
        rlim_t value;
    } fixed[] = {{RLIMIT_NICE, "RLIMIT_NICE", 0},
                 {RLIMIT_RTPRIO, "RLIMIT_RTPRIO", 0},
                 {RLIMIT_MEMLOCK, "RLIMIT_MEMLOCK", 64 << 10},
                 {RLIMIT_MSGQUEUE, "RLIMIT_MSGQUEUE", 819200},
                 {RLIMIT_SIGPENDING, "RLIMIT_SIGPENDING", 1024}};
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
        if (sbx_rlimit(p, fixed[i].res, fixed[i].name, fixed[i].value, fixed[i].value) < 0)
            return -1;
    return 0;
}

static int sbx_rlimits_enter_main(sbx_proc *p)
{
    const sbx_limits *l = &p->limits;
    rlim_t mem = (rlim_t)l->memory_mb << 20;
    rlim_t cpu = (rlim_t)sbx_cpu_rlimit_s(p);
    rlim_t fsize = (rlim_t)l->file_mb << 20;
    if (!p->use_cgroup && sbx_rlimit(p, RLIMIT_AS, "RLIMIT_AS", mem, mem) < 0)
        return -1;
    if (sbx_rlimit(p, RLIMIT_CPU, "RLIMIT_CPU", cpu, cpu + 1) < 0 ||
        sbx_rlimit(p, RLIMIT_NPROC, "RLIMIT_NPROC", l->pids, l->pids) < 0 ||
        sbx_rlimit(p, RLIMIT_FSIZE, "RLIMIT_FSIZE", fsize, fsize) < 0 ||
        sbx_rlimit(p, RLIMIT_NOFILE, "RLIMIT_NOFILE", l->open_files, l->open_files) < 0 ||
        sbx_rlimit(p, RLIMIT_CORE, "RLIMIT_CORE", 1, 1) < 0)
        return -1;
    return sbx_rlimits_fixed(p);
}

const char *sbx_core_pattern_path = "/proc/sys/kernel/core_pattern";

/* A pattern that cannot be read (a runtime that masks /proc/sys) is not refused: whether a
 * host's handler exists is then the runtime's business, as for every other pattern. */
static int sbx_rlimits_prepare(sbx_proc *p)
{
    if (p->inproc)
        return 0;
    char pat[256] = "";
    int fd = open(sbx_core_pattern_path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, pat, sizeof pat - 1);
    close(fd);
    if (n <= 0 || pat[0] != '@')
        return 0;
    pat[strcspn(pat, "\n")] = '\0';
    return sbx_fail(p, 0, "kernel.core_pattern is a socket (%s): it would take a crashing job's "
                    "whole memory whatever its limits, and exec mode cannot keep a job "
                    "non-dumpable past its execve; use zygote mode, or a pipe or file pattern",
                    pat);
}

const sbx_layer sbx_layer_rlimits = {
    .name = "rlimits",
    .prepare = sbx_rlimits_prepare,
    .enter_main = sbx_rlimits_enter_main,
};
