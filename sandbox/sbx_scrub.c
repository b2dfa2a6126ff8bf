/* sbx_scrub.c: the init is a copy of the worker; it must not show the worker to the job.
 *
 * clone() without exec leaves the init with the worker's memory, so the job — which shares
 * the init's pid namespace — could read the worker's command line and environment (broker
 * credentials) in /proc/1/cmdline and /proc/1/environ. The init zeroes that area of its own
 * copy (the worker's is untouched) and marks itself non-dumpable, which makes its /proc files
 * root-only and forbids ptrace by a job that is not root.
 * The area's bounds come from the kernel (/proc/self/stat, read in the parent: the init has
 * the same addresses), and the init writes through /proc/self/mem, which answers EIO on a
 * bad address instead of crashing. PR_SET_MM could re-point the kernel's record instead, but
 * it needs CAP_SYS_RESOURCE, which is not granted everywhere (this VM's root lacks it).
 * Behind this, since the confinement work: the job runs under another uid without
 * capabilities (sbx_user.c) and its /proc has hidepid=2 (sbx_fs.c), so it cannot even see
 * /proc/1; the scrub is what still protects a weaker profile or a future kernel bug. Exec'ing
 * a separate init binary would remove the worker's memory from the init altogether.
 * A zygote (exec'd with its own short environment, and its settings — the guard's whole
 * source among them — as arguments) zeroes its arguments once, at its start (sbx_scrub_args):
 * its jobs then only zero the environment's page or so, not ~45 KB of copied arguments each.
 */
#include "sbx_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

/* Set by sbx_scrub_args: this process's arguments are zeroes already; the environment is
 * what is left to hide. */
static unsigned long sbx_scrub_env_at, sbx_scrub_env_end;

/* arg_start, arg_end, env_start, env_end: /proc/self/stat fields 48 to 51 (Linux >= 3.5).
 * 0, or -1 with the reason in why. */
static int sbx_scrub_area(unsigned long v[4], char *why, size_t whylen)
{
    FILE *f = fopen("/proc/self/stat", "re");
    if (!f) {
        snprintf(why, whylen, "open(/proc/self/stat): %s", strerrordesc_np(errno));
        return -1;
    }
    char line[2048];
    char *ok = fgets(line, sizeof line, f);
    fclose(f);
    char *s = ok ? strrchr(line, ')') : NULL; /* comm may hold spaces and parentheses */
    if (!s) {
        snprintf(why, whylen, "/proc/self/stat: unexpected format");
        return -1;
    }
    int field = 2;
    char *save = NULL;
    for (char *tok = strtok_r(s + 1, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
        field++;
        if (field >= 48 && field <= 51)
            v[field - 48] = strtoul(tok, NULL, 10);
    }
    if (field < 51 || v[0] == 0 || v[1] < v[0] || v[2] < v[1] || v[3] < v[2] || v[3] <= v[0]) {
        snprintf(why, whylen, "/proc/self/stat: no argument and environment area");
        return -1;
    }
    return 0;
}

/* Writes len bytes of data (NULL: zeroes) into this process's memory at `at` through
 * /proc/self/mem (EIO on a bad address rather than a crash); 0, or an errno. No malloc: the
 * init calls it. */
static int sbx_scrub_write(unsigned long at, const char *data, size_t len)
{
    static const char zeros[4096];
    int fd = open("/proc/self/mem", O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return errno;
    for (size_t off = 0; off < len;) {
        size_t n = data || len - off < sizeof zeros ? len - off : sizeof zeros;
        ssize_t w = pwrite(fd, data ? data + off : zeros, n, (off_t)(at + off));
        if (w <= 0) {
            int e = w < 0 ? errno : EIO;
            close(fd);
            return e;
        }
        off += (size_t)w;
    }
    close(fd);
    return 0;
}

int sbx_scrub_args(char *why, size_t whylen)
{
    unsigned long v[4] = {0};
    char reason[160];
    if (sbx_scrub_area(v, reason, sizeof reason) < 0) {
        snprintf(why, whylen, SBX_PREFIX "zygote: %s", reason);
        return -1;
    }
    int e = sbx_scrub_write(v[0], NULL, v[1] - v[0]);
    /* A name for ps in place of the arguments, which are not the job's business. */
    static const char title[] = "codeq-zygote";
    if (!e && v[1] - v[0] >= sizeof title)
        e = sbx_scrub_write(v[0], title, sizeof title);
    if (e) {
        snprintf(why, whylen, SBX_PREFIX "zygote: pwrite(/proc/self/mem, its arguments): %s",
                 strerrordesc_np(e));
        return -1;
    }
    sbx_scrub_env_at = v[2];
    sbx_scrub_env_end = v[3];
    return 0;
}

static int sbx_scrub_prepare(sbx_proc *p)
{
    if (sbx_scrub_env_end) {
        p->scrub_at = sbx_scrub_env_at;
        p->scrub_len = sbx_scrub_env_end - sbx_scrub_env_at;
        return 0;
    }
    unsigned long v[4] = {0};
    char why[160];
    if (sbx_scrub_area(v, why, sizeof why) < 0)
        return sbx_fail(p, 0, "%s", why);
    p->scrub_at = v[0];
    p->scrub_len = v[3] - v[0];
    return 0;
}

static int sbx_scrub_enter_init(sbx_proc *p)
{
    const char *what = sbx_scrub_env_end ? "pwrite(/proc/self/mem, environment)"
                                         : "pwrite(/proc/self/mem, arguments and environment)";
    int e = sbx_scrub_write(p->scrub_at, NULL, p->scrub_len);
    if (e)
        return sbx_child_fail(p, e, what, NULL);
    if (prctl(PR_SET_DUMPABLE, 0) < 0)
        return sbx_child_fail(p, errno, "prctl(PR_SET_DUMPABLE, 0)", NULL);
    return 0;
}

const sbx_layer sbx_layer_scrub = {
    .name = "scrub",
    .prepare = sbx_scrub_prepare,
    .enter_init = sbx_scrub_enter_init,
};
