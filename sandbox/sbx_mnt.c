/* sbx_mnt.c: the job's mount namespace.
 *
 * Propagation is made private first, so nothing mounted inside (the job's root, its /proc,
 * its tmpfs) leaks back to the host, and host mounts do not appear mid-job; it is also what
 * pivot_root requires. The view itself is built by sbx_fs.c.
 */
#include "sbx_int.h"

#include <errno.h>
#include <sched.h>
#include <sys/mount.h>

static int sbx_mnt_enter_init(sbx_proc *p)
{
    if (mount("none", "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
        return sbx_child_fail(p, errno, "mount(/, MS_REC|MS_PRIVATE)", NULL);
    return 0;
}

const sbx_layer sbx_layer_mnt = {
    .name = "mnt",
    .clone_flag = CLONE_NEWNS,
    .clone_flag_name = "CLONE_NEWNS",
    .enter_init = sbx_mnt_enter_init,
};
