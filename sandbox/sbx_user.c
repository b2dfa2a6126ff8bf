/* sbx_user.c: who the job is — an unprivileged uid/gid of its own, with nothing to gain.
 *
 * No user namespace: the worker runs as root on the host, so the init can simply switch the
 * job's main process to a plain uid (uid_base + a slot) before execve. Each running job gets
 * a different slot, host-wide, because RLIMIT_NPROC counts per uid on the whole host (and so
 * that one job can never signal or ptrace another even if the pid namespaces were gone). A user
 * namespace would add a second, weaker root (and is restricted on e.g. Ubuntu 24.04); it
 * helps only a worker that is not root, which this version does not support.
 * The drop, in the main process: bounding set (needs CAP_SETPCAP, so first), supplementary
 * groups, gid, uid (which clears permitted and effective), inheritable and ambient, then
 * no_new_privs so setuid binaries and file capabilities give nothing. The init stays root in
 * its namespaces (it copies artifacts out and kills the job); it is non-dumpable
 * (sbx_scrub.c), so the job cannot ptrace it or read its /proc files.
 * Raw syscalls, not glibc's setresuid & co.: those broadcast to every thread glibc knows of,
 * and a clone()d child still lists the worker's threads.
 */
#include "sbx_int.h"

#include <errno.h>
#include <linux/capability.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

enum { SBX_UID_SLOTS_MAX = 65536 };

/* Slots are taken with flock() on one file per uid in SBX_UID_DIR, so that every sandbox on
 * the host — other worker processes, `codeq run` — agrees on who has which uid; a crashed
 * process's locks go with it. The search starts at a different slot for each job so that a
 * busy host does not scan from the first slot every time. */
#define SBX_UID_DIR "/run/codeq"

static atomic_uint sbx_uid_seq;

static int sbx_user_dir(sbx_proc *p)
{
    if (mkdir(SBX_UID_DIR, 0700) < 0 && errno != EEXIST)
        return sbx_fail(p, errno, "mkdir(%s)", SBX_UID_DIR);
    struct stat st;
    if (lstat(SBX_UID_DIR, &st) < 0)
        return sbx_fail(p, errno, "lstat(%s)", SBX_UID_DIR);
    if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 022))
        return sbx_fail(p, 0, "%s must be a directory owned by uid %u and writable by no one else",
                        SBX_UID_DIR, (unsigned)geteuid());
    return 0;
}

static int sbx_user_prepare(sbx_proc *p)
{
    if (p->uid_count == 0 || p->uid_count > SBX_UID_SLOTS_MAX || p->uid_base == 0 ||
        p->uid_base + p->uid_count < p->uid_base)
        return sbx_fail(p, EINVAL, "config uid_base %u uid_count %u", p->uid_base, p->uid_count);
    if (sbx_user_dir(p) < 0)
        return -1;
    unsigned start = ((unsigned)sbx_pid() * 131u + atomic_fetch_add(&sbx_uid_seq, 1)) % p->uid_count;
    for (unsigned k = 0; k < p->uid_count; k++) {
        unsigned i = (start + k) % p->uid_count;
        char path[64];
        snprintf(path, sizeof path, SBX_UID_DIR "/uid-%u", p->uid_base + i);
        int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0)
            return sbx_fail(p, errno, "open(%s)", path);
        if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
            p->uid_slot = fd;
            p->uid = (uid_t)(p->uid_base + i);
            p->gid = (gid_t)p->uid;
            return 0;
        }
        int e = errno;
        close(fd);
        if (e != EWOULDBLOCK)
            return sbx_fail(p, e, "flock(%s)", path);
    }
    return sbx_fail(p, EAGAIN, "no free job uid: all %u from %u in use", p->uid_count,
                    p->uid_base);
}

/* The job's copy of the descriptor went at its start (sbx_init.c closes all but five). */
void sbx_user_release(sbx_proc *p)
{
    if (p->uid_slot < 0)
        return;
    close(p->uid_slot);
    p->uid_slot = -1;
}

static int sbx_user_collect(sbx_proc *p)
{
    sbx_user_release(p);
    return 0;
}

static int sbx_user_enter_main(sbx_proc *p)
{
    /* EINVAL past the kernel's last capability: the loop has then covered them all. */
    for (int cap = 0; cap < 64; cap++)
        if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno != EINVAL)
            return sbx_child_fail(p, errno, "prctl(PR_CAPBSET_DROP)", NULL);
    if (syscall(SYS_setgroups, 0, NULL) < 0)
        return sbx_child_fail(p, errno, "setgroups([])", NULL);
    if (syscall(SYS_setresgid, p->gid, p->gid, p->gid) < 0)
        return sbx_child_fail(p, errno, "setresgid", NULL);
    if (syscall(SYS_setresuid, p->uid, p->uid, p->uid) < 0)
        return sbx_child_fail(p, errno, "setresuid", NULL);
    struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
    struct __user_cap_data_struct d[2] = {{0}};
    if (syscall(SYS_capset, &h, d) < 0)
        return sbx_child_fail(p, errno, "capset(none)", NULL);
    if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0)
        return sbx_child_fail(p, errno, "prctl(PR_CAP_AMBIENT_CLEAR_ALL)", NULL);
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
        return sbx_child_fail(p, errno, "prctl(PR_SET_NO_NEW_PRIVS)", NULL);
    /* The uid change left the process as dumpable as fs.suid_dumpable says (2 on hosts with
     * apport: dumped as root). Not at all: a core_pattern socket checks nothing else
     * (sbx_seccomp.c keeps it so; exec mode's execve makes it dumpable again, sbx_rlimits.c). */
    if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
        return sbx_child_fail(p, errno, "prctl(PR_SET_DUMPABLE, 0)", NULL);
    /* Belt and braces: a uid that could come back would undo all of the above. */
    if (syscall(SYS_setresuid, 0, 0, 0) == 0)
        return sbx_child_fail(p, 0, "uid 0 could be regained after the drop", NULL);
    return 0;
}

/* The supervisor's killer (sbx_spawn.c) may signal the job's processes yet must be out of
 * their reach: a job that could stop it would stop the supervisor whose memory it shares.
 * Without CAP_KILL, the kernel lets a sender signal a target when the sender's real or
 * effective uid is the target's real or saved uid. So the killer takes the job's uid as its
 * effective uid only: its real and saved uids stay root's, which no process of the job has.
 * (Tracing needs the target's uids and gids all the caller's, and a dumpable target; the
 * change of effective uid leaves the killer non-dumpable.) The raw call: it runs in a vfork()ed
 * child, and glibc's would change the credentials of every thread it knows of. */
int sbx_user_euid_only(uid_t uid)
{
    return syscall(SYS_setresuid, -1, uid, -1) == 0 ? 0 : -1;
}

const sbx_layer sbx_layer_user = {
    .name = "user",
    .prepare = sbx_user_prepare,
    .enter_main = sbx_user_enter_main,
    .collect = sbx_user_collect,
};
