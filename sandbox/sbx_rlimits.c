/* sbx_rlimits.c: per-process resource limits, set in the init and inherited by the job.
 *
 * - RLIMIT_AS bounds each process's address space (memory_mb). It is a per-process, virtual
 *   measure: a job of many processes can use memory_mb each, and threads cost their stacks
 *   (8 MB each). /usr/bin/python3 -I starts in about 14 MB, so 50 MB leaves ~35 MB of heap.
 *   The cgroup memory controller replaces this as the real bound later.
 * - RLIMIT_CPU: soft limit ceil(cpu_ms/1000) s sends SIGXCPU, hard = soft + 1 s sends SIGKILL
 *   to a job that ignores SIGXCPU. Both end as SBX_TIMEOUT (sbx_verdict.c).
 * - RLIMIT_NPROC (pids) counts every process of the real uid on the host and the kernel does
 *   not enforce it for root (CAP_SYS_RESOURCE / CAP_SYS_ADMIN) — i.e. not at all in this
 *   slice. It is set anyway for when the job runs under its own uid; the cgroup pids
 *   controller is the real bound later. Until then a fork bomb is bounded only by the wall
 *   limit and the host's pid_max.
 * - RLIMIT_FSIZE (file_mb): writes past it fail with EFBIG (Python ignores SIGXFSZ).
 * - RLIMIT_NOFILE (open_files), RLIMIT_CORE 0: no core files of hostile processes.
 * Hard limits equal soft ones (except CPU), so the job cannot raise them — once it is no
 * longer root; as root it still can in this slice.
 */
#include "sbx_int.h"

#include <errno.h>
#include <sys/resource.h>

static int sbx_rlimit(sbx_proc *p, int res, const char *name, rlim_t soft, rlim_t hard)
{
    struct rlimit rl = {.rlim_cur = soft, .rlim_max = hard};
    if (setrlimit(res, &rl) < 0)
        return sbx_child_fail(p, errno, "setrlimit(", name, ")", NULL);
    return 0;
}

static int sbx_rlimits_enter_init(sbx_proc *p)
{
    const sbx_limits *l = &p->limits;
    rlim_t mem = (rlim_t)l->memory_mb << 20;
    rlim_t cpu = ((rlim_t)l->cpu_ms + 999) / 1000;
    rlim_t fsize = (rlim_t)l->file_mb << 20;
    if (sbx_rlimit(p, RLIMIT_AS, "RLIMIT_AS", mem, mem) < 0 ||
        sbx_rlimit(p, RLIMIT_CPU, "RLIMIT_CPU", cpu, cpu + 1) < 0 ||
        sbx_rlimit(p, RLIMIT_NPROC, "RLIMIT_NPROC", l->pids, l->pids) < 0 ||
        sbx_rlimit(p, RLIMIT_FSIZE, "RLIMIT_FSIZE", fsize, fsize) < 0 ||
        sbx_rlimit(p, RLIMIT_NOFILE, "RLIMIT_NOFILE", l->open_files, l->open_files) < 0 ||
        sbx_rlimit(p, RLIMIT_CORE, "RLIMIT_CORE", 0, 0) < 0)
        return -1;
    return 0;
}

const sbx_layer sbx_layer_rlimits = {
    .name = "rlimits",
    .enter_init = sbx_rlimits_enter_init,
};
