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
 */
#include "sbx_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

/* arg_start .. env_end: /proc/self/stat fields 48 to 51 (Linux >= 3.5). */
static int sbx_scrub_prepare(sbx_proc *p)
{
    FILE *f = fopen("/proc/self/stat", "re");
    if (!f)
        return sbx_fail(p, errno, "open(/proc/self/stat)");
    char line[2048];
    char *ok = fgets(line, sizeof line, f);
    fclose(f);
    char *s = ok ? strrchr(line, ')') : NULL; /* comm may hold spaces and parentheses */
    if (!s)
        return sbx_fail(p, 0, "/proc/self/stat: unexpected format");
    unsigned long v[4] = {0};
    int field = 2;
    char *save = NULL;
    for (char *tok = strtok_r(s + 1, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
        field++;
        if (field >= 48 && field <= 51)
            v[field - 48] = strtoul(tok, NULL, 10);
    }
    if (field < 51 || v[0] == 0 || v[3] <= v[0])
        return sbx_fail(p, 0, "/proc/self/stat: no argument and environment area");
    p->scrub_at = v[0];
    p->scrub_len = v[3] - v[0];
    return 0;
}

static int sbx_scrub_enter_init(sbx_proc *p)
{
    static const char zeros[4096];
    int fd = open("/proc/self/mem", O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return sbx_child_fail(p, errno, "open(/proc/self/mem)", NULL);
    for (size_t off = 0; off < p->scrub_len;) {
        size_t n = p->scrub_len - off < sizeof zeros ? p->scrub_len - off : sizeof zeros;
        ssize_t w = pwrite(fd, zeros, n, (off_t)(p->scrub_at + off));
        if (w <= 0) {
            int e = w < 0 ? errno : EIO;
            close(fd);
            return sbx_child_fail(p, e, "pwrite(/proc/self/mem, arguments and environment)", NULL);
        }
        off += (size_t)w;
    }
    close(fd);
    if (prctl(PR_SET_DUMPABLE, 0) < 0)
        return sbx_child_fail(p, errno, "prctl(PR_SET_DUMPABLE, 0)", NULL);
    return 0;
}

const sbx_layer sbx_layer_scrub = {
    .name = "scrub",
    .prepare = sbx_scrub_prepare,
    .enter_init = sbx_scrub_enter_init,
};
