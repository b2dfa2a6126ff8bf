/* sbx_err.c: how the sandbox says what went wrong.
 *
 * Every failure becomes one line, "codeq: sandbox: <step>: <strerror>", in the job's result;
 * the first failure wins because later ones are usually its consequences. The formatter
 * only concatenates strings (no printf, no malloc, strerrordesc_np returns a constant) so the
 * child, cloned from a multi-threaded worker, can use it before it reports over the pipe.
 */
#include "sbx_int.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static size_t sbx_append(char *dst, size_t n, size_t at, const char *s)
{
    while (*s && at + 1 < n)
        dst[at++] = *s++;
    dst[at] = '\0';
    return at;
}

/* parts: NULL-terminated pieces of the step's name; err 0 adds no ": reason". */
void sbx_errfmt(char *dst, size_t n, int err, const char *const *parts)
{
    if (n == 0)
        return;
    size_t at = sbx_append(dst, n, 0, SBX_PREFIX);
    for (; *parts; parts++)
        at = sbx_append(dst, n, at, *parts);
    if (err) {
        const char *desc = strerrordesc_np(err);
        at = sbx_append(dst, n, at, ": ");
        sbx_append(dst, n, at, desc ? desc : "unknown error");
    }
}

int sbx_fail(sbx_proc *p, int err, const char *fmt, ...)
{
    if (p->failed)
        return -1;
    char what[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    const char *parts[] = {what, NULL};
    sbx_errfmt(p->res.message, sizeof p->res.message, err, parts);
    p->res.status = SBX_INTERNAL;
    p->res.unstarted = p->setting_up;
    p->failed = true;
    return -1;
}

/* A failure a child reported, recorded unless one was already. */
void sbx_fail_reported(sbx_proc *p, const sbx_report *r)
{
    if (p->failed)
        return;
    memcpy(p->res.message, r->msg, sizeof r->msg);
    p->res.status = SBX_INTERNAL;
    p->res.unstarted = r->setup != 0;
    p->failed = true;
}

/* In the child: one atomic message to the parent; the caller then _exit()s. A layer's
 * leave_init hook also runs in a supervisor that is the job's pid 1 (sbx_spawn.c), which has
 * no report pipe: there the failure is recorded as sbx_fail records it. */
int sbx_child_fail(sbx_proc *p, int err, ...)
{
    const char *parts[8];
    int k = 0;
    va_list ap;
    va_start(ap, err);
    for (const char *s; k < 7 && (s = va_arg(ap, const char *)) != NULL;)
        parts[k++] = s;
    va_end(ap);
    parts[k] = NULL;

    /* Out of space in the child is the job's doing: every file system it writes during setup
     * is the job's own size-capped tmpfs (its inputs and main.py copied in), so running it
     * again would fail the same way. Anything else before the job's code is the sandbox's. */
    bool full = err == ENOSPC || err == EDQUOT || err == EFBIG;
    sbx_report r = {.kind = SBX_REPORT_FAIL, .setup = p->setting_up && !full};
    sbx_errfmt(r.msg, sizeof r.msg, err, parts);
    if (p->report_wr < 0) {
        sbx_fail_reported(p, &r);
        return -1;
    }
    /* Nothing to do if this fails: the parent then sees an init without a report. */
    ssize_t w = write(p->report_wr, &r, sizeof r);
    (void)w;
    return -1;
}

uint64_t sbx_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

pid_t sbx_self_pid;

pid_t sbx_pid(void)
{
    return sbx_self_pid ? sbx_self_pid : getpid();
}
