/* sbx_fs.c: the job's whole file system view — a minimal root built by the init.
 *
 * The init (root in its own mount namespace, propagation already private: sbx_mnt.c) mounts
 * a small tmpfs on the staging directory's root/ and builds there:
 *   /usr            the host's, through a read-only overlay of the job's own (nosuid, nodev:
 *                   own inodes, so file locks are no channel between jobs); /bin /lib /lib64
 *                   /sbin are the merged-usr symlinks into it, as on Debian 12
 *   /etc            passwd and group naming the job's user, and /etc/alternatives (Debian's
 *                   symlinks into /usr that shared libraries such as libblas.so.3 resolve
 *                   through) as a read-only overlay; nothing else of the host's
 *   /work /tmp /dev/shm  one size-capped tmpfs (tmpfs_mb; noexec, nosuid, nodev) bound three
 *                   times, so one cap covers them all and nothing is shared with the host or
 *                   another job; /work is the job's cwd and HOME, owned by its uid
 *   /dev            a tmpfs with null, zero, full, random, urandom made with mknod, then
 *                   read-only
 *   /proc           the job's pid namespace, read-only, hidepid=2: the job sees only its own
 *                   uid's processes, not the init; subset=pid (Linux 5.8): only the process
 *                   directories, self and thread-self. The global files describe the host and
 *                   count what every job does at once (meminfo, stat, loadavg, interrupts,
 *                   sys/): a host description and a channel between concurrent jobs
 * then copies main.py, the prelude and the input files from the staging in/ into /work
 * (sbx_files.c), keeps a descriptor on the staging out/ for the artifacts, pivots into the
 * new root, detaches the old one and remounts / read-only. Host /tmp, /home, /root, /var,
 * /etc, the worker's config and credentials are simply not in this tree.
 * Everything is relative to the new root as cwd, so the child needs no path building (it may
 * not malloc or use stdio); the few absolute paths are made in the parent.
 */
#include "sbx_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <unistd.h>

static int sbx_fs_prepare(sbx_proc *p)
{
    int n = snprintf(p->fs_passwd, sizeof p->fs_passwd,
                     "root:x:0:0:root:/:/usr/sbin/nologin\ncodeq:x:%u:%u:codeq job:/work:"
                     "/usr/sbin/nologin\n",
                     (unsigned)p->uid, (unsigned)p->gid);
    int m = snprintf(p->fs_group, sizeof p->fs_group, "root:x:0:\ncodeq:x:%u:\n",
                     (unsigned)p->gid);
    int k = snprintf(p->fs_tmpfs_opts, sizeof p->fs_tmpfs_opts,
                     "size=%um,nr_inodes=16384,mode=0755", p->limits.tmpfs_mb);
    if (n < 0 || (size_t)n >= sizeof p->fs_passwd || m < 0 || (size_t)m >= sizeof p->fs_group ||
        k < 0 || (size_t)k >= sizeof p->fs_tmpfs_opts)
        return sbx_fail(p, ENAMETOOLONG, "fs: /etc files");
    return 0;
}

static int sbx_fs_mount(sbx_proc *p, const char *src, const char *dst, const char *type,
                        unsigned long flags, const char *opts)
{
    if (mount(src, dst, type, flags, opts) < 0)
        return sbx_child_fail(p, errno, "mount(", src ? src : "none", ", ", dst, ")", NULL);
    return 0;
}

static int sbx_fs_mkdir(sbx_proc *p, const char *path, mode_t mode, uid_t uid, gid_t gid)
{
    if (mkdir(path, mode) < 0)
        return sbx_child_fail(p, errno, "mkdir(", path, ")", NULL);
    if (chmod(path, mode) < 0 || chown(path, uid, gid) < 0) /* mkdir honours the umask */
        return sbx_child_fail(p, errno, "chmod/chown(", path, ")", NULL);
    return 0;
}

static int sbx_fs_write(sbx_proc *p, const char *path, const char *data, mode_t mode)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
    if (fd < 0)
        return sbx_child_fail(p, errno, "open(", path, ")", NULL);
    size_t len = strlen(data);
    ssize_t w = write(fd, data, len);
    int e = errno;
    close(fd);
    if (w != (ssize_t)len)
        return sbx_child_fail(p, w < 0 ? e : EIO, "write(", path, ")", NULL);
    return 0;
}

static int sbx_fs_skeleton(sbx_proc *p)
{
    static const char *const dirs[] = {"usr", "dev", "proc", "work", "tmp", "etc",
                                       "etc/alternatives", ".sbx"};
    static const char *const links[][2] = {
        {"usr/bin", "bin"}, {"usr/lib", "lib"}, {"usr/lib64", "lib64"}, {"usr/sbin", "sbin"}};
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++)
        if (sbx_fs_mkdir(p, dirs[i], 0755, 0, 0) < 0)
            return -1;
    for (size_t i = 0; i < sizeof links / sizeof links[0]; i++)
        if (symlink(links[i][0], links[i][1]) < 0)
            return sbx_child_fail(p, errno, "symlink(", links[i][1], ")", NULL);
    if (sbx_fs_write(p, "etc/passwd", p->fs_passwd, 0644) < 0 ||
        sbx_fs_write(p, "etc/group", p->fs_group, 0644) < 0 ||
        sbx_fs_write(p, "etc/hostname", "codeq\n", 0644) < 0)
        return -1;
    return 0;
}

static int sbx_fs_usr(sbx_proc *p)
{
    /* An overlay of our own rather than a bind: file locks live on the inode, and a bind
     * shares the host's inodes, so flock() on /usr/bin/python3 would be a channel between
     * jobs. The overlay's inodes are this job's. Two layers (the second one empty) because
     * an overlay without an upper layer needs two. */
    if (sbx_fs_mkdir(p, ".sbx/empty", 0755, 0, 0) < 0 ||
        sbx_fs_mount(p, "overlay", "usr", "overlay", MS_RDONLY | MS_NOSUID | MS_NODEV,
                     "lowerdir=/usr:.sbx/empty") < 0)
        return -1;
    /* The same for the alternatives' symlinks: without them numpy cannot find libblas. */
    return sbx_fs_mount(p, "overlay", "etc/alternatives", "overlay",
                        MS_RDONLY | MS_NOSUID | MS_NODEV, "lowerdir=/etc/alternatives:.sbx/empty");
}

/* One tmpfs for /work, /tmp and /dev/shm, so tmpfs_mb caps them together. */
static int sbx_fs_scratch(sbx_proc *p)
{
    if (sbx_fs_mount(p, "codeq-work", ".sbx", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
                     p->fs_tmpfs_opts) < 0 ||
        sbx_fs_mkdir(p, ".sbx/work", 0700, p->uid, p->gid) < 0 ||
        sbx_fs_mkdir(p, ".sbx/tmp", 01777, 0, 0) < 0 ||
        sbx_fs_mkdir(p, ".sbx/shm", 01777, 0, 0) < 0 ||
        sbx_fs_mount(p, ".sbx/work", "work", NULL, MS_BIND, NULL) < 0 ||
        sbx_fs_mount(p, ".sbx/tmp", "tmp", NULL, MS_BIND, NULL) < 0)
        return -1;
    return 0;
}

static int sbx_fs_dev(sbx_proc *p)
{
    /* Made, not bound from the host: a bound node is the host's inode, whose file locks
     * every job would share. */
    static const struct {
        const char *name;
        unsigned minor;
    } nodes[] = {{"null", 3}, {"zero", 5}, {"full", 7}, {"random", 8}, {"urandom", 9}};
    static const char *const links[][2] = {{"/proc/self/fd", "dev/fd"},
                                           {"/proc/self/fd/0", "dev/stdin"},
                                           {"/proc/self/fd/1", "dev/stdout"},
                                           {"/proc/self/fd/2", "dev/stderr"}};
    if (sbx_fs_mount(p, "codeq-dev", "dev", "tmpfs", MS_NOSUID | MS_NOEXEC,
                     "size=64k,nr_inodes=64,mode=0755") < 0 ||
        sbx_fs_mkdir(p, "dev/shm", 01777, 0, 0) < 0 ||
        sbx_fs_mount(p, ".sbx/shm", "dev/shm", NULL, MS_BIND, NULL) < 0)
        return -1;
    for (size_t i = 0; i < sizeof nodes / sizeof nodes[0]; i++) {
        char mine[32] = "dev/";
        strcat(mine, nodes[i].name);
        if (mknod(mine, S_IFCHR | 0666, makedev(1, nodes[i].minor)) < 0 || chmod(mine, 0666) < 0)
            return sbx_child_fail(p, errno, "mknod(", mine, ")", NULL);
    }
    for (size_t i = 0; i < sizeof links / sizeof links[0]; i++)
        if (symlink(links[i][0], links[i][1]) < 0)
            return sbx_child_fail(p, errno, "symlink(", links[i][1], ")", NULL);
    return sbx_fs_mount(p, NULL, "dev", NULL,
                        MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NOEXEC, "size=64k,mode=0755");
}

/* main.py, the prelude and the inputs into /work; the out/ descriptor kept for later. */
static int sbx_fs_stage(sbx_proc *p)
{
    int in = open(p->fs_in, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (in < 0)
        return sbx_child_fail(p, errno, "open(staging in/)", NULL);
    int work = open("work", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (work < 0) {
        close(in);
        return sbx_child_fail(p, errno, "open(/work)", NULL);
    }
    int rc = sbx_files_copy_in(p, in, work);
    close(in);
    close(work);
    if (rc < 0)
        return -1;
    p->out_fd = open(p->fs_out, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (p->out_fd < 0)
        return sbx_child_fail(p, errno, "open(staging out/)", NULL);
    return 0;
}

static int sbx_fs_pivot(sbx_proc *p)
{
    /* pivot_root(".", "."): the old root ends up stacked under the new one, then detached. */
    if (syscall(SYS_pivot_root, ".", ".") < 0)
        return sbx_child_fail(p, errno, "pivot_root", NULL);
    if (umount2(".", MNT_DETACH) < 0)
        return sbx_child_fail(p, errno, "umount2(old root)", NULL);
    if (chdir("/") < 0)
        return sbx_child_fail(p, errno, "chdir(/)", NULL);
    if (sbx_fs_mount(p, NULL, "/", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV,
                     NULL) < 0)
        return -1;
    if (chdir("/work") < 0)
        return sbx_child_fail(p, errno, "chdir(/work)", NULL);
    return 0;
}

static int sbx_fs_enter_init(sbx_proc *p)
{
    if (sbx_fs_mount(p, "codeq-root", p->fs_root, "tmpfs", MS_NOSUID | MS_NODEV,
                     "size=1m,nr_inodes=256,mode=0755") < 0)
        return -1;
    if (chdir(p->fs_root) < 0)
        return sbx_child_fail(p, errno, "chdir(", p->fs_root, ")", NULL);
    if (sbx_fs_skeleton(p) < 0 || sbx_fs_scratch(p) < 0 || sbx_fs_usr(p) < 0 || sbx_fs_dev(p) < 0 ||
        sbx_fs_stage(p) < 0)
        return -1;
    /* Moved out of the new root into the old one, not unmounted: the old root's detach below
     * takes it along, and every umount costs an expedited RCU grace period that concurrent
     * jobs wait for one after another (perf: the main off-CPU wait of two jobs at once). */
    if (mount(".sbx", p->fs_scratch, NULL, MS_MOVE, NULL) < 0 || rmdir(".sbx") < 0)
        return sbx_child_fail(p, errno, "move .sbx out of the root", NULL);
    if (sbx_fs_mount(p, "proc", "proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RDONLY,
                     "hidepid=2,subset=pid") < 0)
        return -1;
    return sbx_fs_pivot(p);
}

/* The init, once every process of the job is gone: nothing can change /work any more. A
 * supervisor that is the job's pid 1 copies from the descriptor of /work the main process sent
 * it, outside the job's root: copy-out opens one name at a time, never following a symlink
 * (sbx_files.c), so it reads the same files from anywhere. */
static int sbx_fs_leave_init(sbx_proc *p)
{
    if (p->self_init) {
        int out = open(p->fs_out, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (out < 0)
            return sbx_child_fail(p, errno, "open(staging out/)", NULL);
        int rc = sbx_files_copy_out(p, p->work_fd, out, &p->artifacts_skipped);
        close(out);
        return rc;
    }
    int work = open("/work", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (work < 0)
        return sbx_child_fail(p, errno, "open(/work)", NULL);
    int rc = sbx_files_copy_out(p, work, p->out_fd, &p->artifacts_skipped);
    close(work);
    return rc;
}

const sbx_layer sbx_layer_fs = {
    .name = "fs",
    .prepare = sbx_fs_prepare,
    .enter_init = sbx_fs_enter_init,
    .leave_init = sbx_fs_leave_init,
};
