/* sbx_iodev.c: the disks a job's I/O reaches, and their throttle in the job's cgroup.
 *
 * A job reads the host's /usr (through its read-only overlay) and writes its tmpfs; the only
 * host disks it can make busy are those under /usr (and what is mounted beneath it),
 * /etc/alternatives, and the work root where its staging directory lives (issue 11: 1.6 GB
 * read in 6 s with nothing in the way). Their devices are found once per process: st_dev of
 * those paths and the mounts under /usr in /proc/self/mountinfo. The block layer throttles a
 * whole disk, not a partition, so a partition (/sys/dev/block/MAJ:MIN/partition exists) is
 * replaced by its disk (../dev). A device that is not a block device — tmpfs, overlay, btrfs
 * subvolumes, 9p (anonymous, major 0, or absent from /sys/dev/block) — has nothing to throttle
 * and is left out; with none left the limits are simply not written.
 * Each backend calls sbx_iodev_apply() on the job's new cgroup: v1 writes "MAJ:MIN VALUE" to
 * the four blkio.throttle.* files, v2 one io.max line per disk. The limits are the job's
 * (io_read_bps, io_write_bps, io_read_iops, io_write_iops). cgroup v1 throttles reads,
 * direct and synchronous writes only: buffered writes reach the disk later from the kernel's
 * writeback threads, outside the job's cgroup (v2 charges them to the job).
 */
#include "sbx_int.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

enum { SBX_IODEV_MAX = 16 };

static pthread_once_t sbx_iodev_once = PTHREAD_ONCE_INIT;
static char sbx_iodev_root[PATH_MAX]; /* the work root of the first job of this process */
static dev_t sbx_iodev[SBX_IODEV_MAX];
static int sbx_iodev_n;

/* The whole disk behind device d, or false when d is no block device. */
static bool sbx_iodev_disk(dev_t d, dev_t *disk)
{
    char path[128], buf[32];
    unsigned maj, min;
    if (major(d) == 0)
        return false;
    snprintf(path, sizeof path, "/sys/dev/block/%u:%u/partition", major(d), minor(d));
    if (access(path, F_OK) < 0) {
        *disk = d;
        snprintf(path, sizeof path, "/sys/dev/block/%u:%u", major(d), minor(d));
        return access(path, F_OK) == 0;
    }
    snprintf(path, sizeof path, "/sys/dev/block/%u:%u/../dev", major(d), minor(d));
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
    if (fd >= 0)
        close(fd);
    if (n <= 0)
        return false;
    buf[n] = '\0';
    if (sscanf(buf, "%u:%u", &maj, &min) != 2)
        return false;
    *disk = makedev(maj, min);
    return true;
}

static void sbx_iodev_add(dev_t d)
{
    dev_t disk;
    if (!sbx_iodev_disk(d, &disk))
        return;
    for (int i = 0; i < sbx_iodev_n; i++)
        if (sbx_iodev[i] == disk)
            return;
    if (sbx_iodev_n < SBX_IODEV_MAX)
        sbx_iodev[sbx_iodev_n++] = disk;
}

/* Mounts at or under /usr: "36 35 98:0 /root /usr/local rw,..." (fields 3 and 5). */
static void sbx_iodev_mounts(void)
{
    FILE *f = fopen("/proc/self/mountinfo", "re");
    char line[1024], at[512];
    unsigned maj, min;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "%*u %*u %u:%u %*s %511s", &maj, &min, at) == 3 &&
            strncmp(at, "/usr", 4) == 0 && (at[4] == '\0' || at[4] == '/'))
            sbx_iodev_add(makedev(maj, min));
    if (f)
        fclose(f);
}

static void sbx_iodev_find(void)
{
    const char *paths[] = {"/usr", "/usr/lib", "/etc/alternatives", sbx_iodev_root};
    struct stat st;
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++)
        if (paths[i][0] && stat(paths[i], &st) == 0)
            sbx_iodev_add(st.st_dev);
    sbx_iodev_mounts();
}

int sbx_iodev_list(const char *work_root, dev_t *devs, int max)
{
    if (!sbx_iodev_root[0] && work_root)
        snprintf(sbx_iodev_root, sizeof sbx_iodev_root, "%s", work_root);
    pthread_once(&sbx_iodev_once, sbx_iodev_find);
    int n = sbx_iodev_n < max ? sbx_iodev_n : max;
    memcpy(devs, sbx_iodev, (size_t)n * sizeof *devs);
    return n;
}

static int sbx_iodev_write(sbx_proc *p, const char *path, const char *line)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return sbx_fail(p, errno, "cgroup open %s", path);
    ssize_t w = write(fd, line, strlen(line));
    int e = errno;
    close(fd);
    if (w != (ssize_t)strlen(line))
        return sbx_fail(p, w < 0 ? e : EIO, "cgroup write '%s' to %s", line, path);
    return 0;
}

int sbx_iodev_apply(sbx_proc *p, const char *dir, bool v2)
{
    dev_t devs[SBX_IODEV_MAX];
    int n = sbx_iodev_list(p->work_root, devs, SBX_IODEV_MAX);
    const sbx_limits *l = &p->limits;
    const struct {
        const char *file;
        uint32_t v;
    } v1[] = {
        {"blkio.throttle.read_bps_device", l->io_read_bps},
        {"blkio.throttle.write_bps_device", l->io_write_bps},
        {"blkio.throttle.read_iops_device", l->io_read_iops},
        {"blkio.throttle.write_iops_device", l->io_write_iops},
    };
    char path[PATH_MAX], line[160];
    for (int i = 0; i < n; i++) {
        unsigned maj = major(devs[i]), min = minor(devs[i]);
        if (v2) {
            snprintf(path, sizeof path, "%s/io.max", dir);
            snprintf(line, sizeof line, "%u:%u rbps=%u wbps=%u riops=%u wiops=%u", maj, min,
                     l->io_read_bps, l->io_write_bps, l->io_read_iops, l->io_write_iops);
            if (sbx_iodev_write(p, path, line) < 0)
                return -1;
            continue;
        }
        for (size_t k = 0; k < sizeof v1 / sizeof v1[0]; k++) {
            snprintf(path, sizeof path, "%s/%s", dir, v1[k].file);
            snprintf(line, sizeof line, "%u:%u %u", maj, min, v1[k].v);
            if (sbx_iodev_write(p, path, line) < 0)
                return -1;
        }
    }
    return 0;
}
