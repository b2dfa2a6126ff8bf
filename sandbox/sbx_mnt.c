/* sbx_mnt.c: the job's mount namespace.
 *
 * Propagation is made private first, so nothing mounted inside (our /proc, or anything the
 * job mounts) leaks back to the host, and host mounts do not appear mid-job. /proc is then
 * mounted afresh so it describes the job's pid namespace: the job sees its own processes
 * only, never the worker's command line or environment. The filesystem is otherwise the
 * host's in this slice; pivot_root onto a minimal read-only root replaces that here later.
 */
#include "sbx_int.h"

#include <errno.h>
#include <sched.h>
#include <sys/mount.h>

static int sbx_mnt_enter_init(sbx_proc *p)
{
    if (mount("none", "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
        return sbx_child_fail(p, errno, "mount(/, MS_REC|MS_PRIVATE)", NULL);
    if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
        return sbx_child_fail(p, errno, "mount(proc, /proc)", NULL);
    return 0;
}

const sbx_layer sbx_layer_mnt = {
    .name = "mnt",
    .clone_flag = CLONE_NEWNS,
    .clone_flag_name = "CLONE_NEWNS",
    .enter_init = sbx_mnt_enter_init,
};
