/* sbx_verdict.c: what happened to the job, from what the parent saw.
 *
 * Precedence, first match wins:
 *   1. a sandbox failure (setup step, sbx_kill, read error)         -> internal_error
 *   2. a process of the job made a call the seccomp filter refuses  -> seccomp_violation
 *      (its listener told the supervisor, which ended the job: the call is named, and the
 *      signal is SIGSYS, the kernel's for such a call, whichever process made it), or one
 *      died of SIGSYS (only the filter can send it: it refuses every way a job could,
 *      sbx_seccomp.c; without a filter, profile no-seccomp, that is the job's own `signal`)
 *   3. the memory cgroup's OOM killer killed one                    -> memory_limit
 *      (isolate's cg-oom-killed: a job that ran out of memory and then hung or crashed
 *      is told as memory_limit, not as timeout or signal)
 *   4. the parent killed the job: wall deadline, total CPU, output cap
 *                                                  -> timeout / timeout / output_limit
 *   5. a stream went over its cap, noticed only after the exit      -> output_limit
 *      (the bytes were written before the exit, so the verdict does not depend on timing)
 *   6. the main process's own end: SIGXCPU or SIGKILL after the job used its CPU limit
 *      (RLIMIT_CPU's soft or hard limit; a job that signals itself is not let pass as a
 *      timeout) -> timeout; without a memory cgroup, MemoryError -> memory_limit (with one,
 *      its OOM record is the only evidence: a MemoryError a program raises, or an allocation
 *      the kernel refused below the limit, is its own error); other signals -> signal;
 *      exit code non-zero -> error; 0 -> ok.
 * Usage comes from the job's cgroup when there is one: CPU of every process, and the peak
 * of memory charged to the job (its processes, its tmpfs, its page cache) — none of the
 * worker's. Without a cgroup it is the init's wait4() rusage (see sbx_spawn.c), whose max
 * RSS is inflated by the worker's memory.
 */
#include "sbx_int.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

static uint64_t sbx_tv_ms(struct timeval tv)
{
    return (uint64_t)tv.tv_sec * 1000u + (uint64_t)tv.tv_usec / 1000u;
}

static void sbx_verdict_usage(sbx_proc *p)
{
    sbx_result *r = &p->res;
    r->wall_ms = p->end_ms > p->t0_ms && p->t0_ms ? p->end_ms - p->t0_ms : 0;
    r->cpu_ms = sbx_tv_ms(p->ru.ru_utime) + sbx_tv_ms(p->ru.ru_stime);
    r->max_rss_kb = (uint64_t)(p->ru.ru_maxrss > 0 ? p->ru.ru_maxrss : 0);
    if (p->cg_have) {
        r->cpu_ms = p->cg_cpu_ns / 1000000u;
        r->max_rss_kb = p->cg_peak_bytes / 1024u;
    }
    r->exit_code = -1;
    r->signal = 0;
    if (p->have_exit && WIFEXITED(p->main_wstatus))
        r->exit_code = WEXITSTATUS(p->main_wstatus);
    else if (p->have_exit && WIFSIGNALED(p->main_wstatus))
        r->signal = WTERMSIG(p->main_wstatus);
    else if (p->killed != SBX_KILL_NONE && p->pid > 0)
        r->signal = SIGKILL; /* the main process died with the namespace */
}

/* Python's MemoryError under RLIMIT_AS: the last line of an untruncated stderr is exactly
 * "MemoryError" or "MemoryError: ...", and the exit code is 1. A heuristic: the memory
 * cgroup's OOM record replaces it in the confinement issue. */
static bool sbx_verdict_memory_error(const sbx_proc *p)
{
    const sbx_buf *e = &p->res.err;
    if (p->res.exit_code != 1 || e->truncated || !e->data)
        return false;
    size_t end = e->len;
    while (end > 0 && (e->data[end - 1] == '\n' || e->data[end - 1] == '\r'))
        end--;
    size_t start = end;
    while (start > 0 && e->data[start - 1] != '\n')
        start--;
    static const char tag[] = "MemoryError";
    size_t n = end - start, k = sizeof tag - 1;
    return n >= k && memcmp(e->data + start, tag, k) == 0 && (n == k || e->data[start + k] == ':');
}

static void sbx_verdict_set(sbx_proc *p, sbx_status s, const char *msg)
{
    p->res.status = s;
    snprintf(p->res.message, sizeof p->res.message, "%s", msg);
}

static void sbx_verdict_exit(sbx_proc *p)
{
    const sbx_limits *l = &p->limits;
    sbx_result *r = &p->res;
    char msg[128];
    uint64_t cpu_soft_ms = sbx_cpu_rlimit_s(p) * 1000;
    snprintf(msg, sizeof msg, "cpu time limit %u ms exceeded", l->cpu_ms);
    /* 90%: the cgroup's figure runs a little behind the process's own CPU clock, which is
     * what RLIMIT_CPU fires on (measured: 979 ms at a 1 s limit). */
    if ((r->signal == SIGXCPU || r->signal == SIGKILL) && r->cpu_ms * 10 >= cpu_soft_ms * 9) {
        sbx_verdict_set(p, SBX_TIMEOUT, msg);
    } else if (r->signal) {
        sbx_verdict_set(p, SBX_SIGNAL, "");
    } else if (r->exit_code == 0) {
        sbx_verdict_set(p, SBX_OK, "");
    } else if (!p->cg_have && sbx_verdict_memory_error(p)) {
        snprintf(msg, sizeof msg, "memory limit %u MB exceeded (MemoryError)", l->memory_mb);
        sbx_verdict_set(p, SBX_MEMORY_LIMIT, msg);
    } else {
        sbx_verdict_set(p, SBX_ERROR, "");
    }
}

void sbx_verdict(sbx_proc *p)
{
    sbx_verdict_usage(p);
    if (p->failed)
        return;
    char msg[192];
    if (p->refused.seen && p->use_seccomp) {
        char call[96];
        sbx_seccomp_name(&p->refused, call, sizeof call);
        snprintf(msg, sizeof msg, "seccomp: a process of the job made a forbidden system call: %s",
                 call);
        sbx_verdict_set(p, SBX_SECCOMP, msg);
        p->res.exit_code = -1;
        p->res.signal = SIGSYS;
    } else if (p->sigsys > 0 && p->use_seccomp) {
        snprintf(msg, sizeof msg,
                 "seccomp: a process of the job made a forbidden system call (SIGSYS)");
        sbx_verdict_set(p, SBX_SECCOMP, msg);
    } else if (p->cg_oom_kills > 0) {
        snprintf(msg, sizeof msg, "memory limit %u MB exceeded (cgroup OOM kill)",
                 p->limits.memory_mb);
        sbx_verdict_set(p, SBX_MEMORY_LIMIT, msg);
    } else if (p->killed == SBX_KILL_CPU) {
        snprintf(msg, sizeof msg, "cpu time limit %u ms exceeded", p->limits.cpu_ms);
        sbx_verdict_set(p, SBX_TIMEOUT, msg);
    } else if (p->killed == SBX_KILL_WALL) {
        snprintf(msg, sizeof msg, "wall time limit %u ms exceeded", p->limits.wall_ms);
        sbx_verdict_set(p, SBX_TIMEOUT, msg);
    } else if (p->killed == SBX_KILL_OUTPUT || sbx_capture_overflow(p)) {
        snprintf(msg, sizeof msg, "%s above the output limit of %u bytes", p->kill_stream,
                 p->limits.output_bytes);
        sbx_verdict_set(p, SBX_OUTPUT_LIMIT, msg);
    } else if (!p->have_exit) {
        sbx_fail(p, 0, "init ended without reporting the job's exit (wait status 0x%x)",
                 (unsigned)p->init_wstatus);
    } else {
        sbx_verdict_exit(p);
    }
}
