/* sbx_workdir.c: a fresh host staging directory per job — in/, out/ and root/.
 *
 * in/ holds main.py, the prelude and the input files, written here by the parent and copied
 * by the init (zygote mode: the main process) into the job's own tmpfs (/work, see sbx_fs.c);
 * out/ receives the artifacts the init (zygote mode: the supervisor) copies back; root/ is the mount point of the job's new root, which only the job's
 * mount namespace ever sees mounted. The job itself never sees this directory.
 *
 * The root (default /tmp/codeq) is made 0700 and must be a real directory owned by us: /tmp
 * is world-writable, and a directory or symlink planted there by someone else must not become
 * the parent of job directories. Each job's directory comes from mkdtemp so names never
 * collide, with the sanitised job id in it for whoever lists the root while debugging.
 *
 * Removal runs after the whole pid namespace is gone, but the tree was built by the job, so
 * it is hostile: symlinks are unlinked, never followed (unlinkat, openat with O_NOFOLLOW), and
 * the walk holds one descriptor per level. A tree deeper than SBX_RM_DEPTH has its deep part
 * renamed up to the top and taken on a later pass, so depth costs passes, not descriptors.
 * The number of steps is bounded by SBX_RM_BUDGET.
 */
#include "sbx_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

enum { SBX_RM_DEPTH = 32, SBX_RM_BUDGET = 10 * 1000 * 1000 };

int sbx_workdir_root_check(const char *root, char *why, size_t whylen)
{
    if (mkdir(root, 0700) < 0 && errno != EEXIST) {
        snprintf(why, whylen, "mkdir(%s): %s", root, strerrordesc_np(errno));
        return -1;
    }
    struct stat st;
    if (lstat(root, &st) < 0) {
        snprintf(why, whylen, "lstat(%s): %s", root, strerrordesc_np(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
        snprintf(why, whylen, "work root %s is not a directory", root);
        return -1;
    }
    if (st.st_uid != geteuid() || (st.st_mode & 022)) {
        snprintf(why, whylen, "work root %s must be owned by uid %u and writable by no one else",
                 root, (unsigned)geteuid());
        return -1;
    }
    return 0;
}

static int sbx_workdir_root(sbx_proc *p)
{
    char why[PATH_MAX + 80];
    if (sbx_workdir_root_check(p->work_root, why, sizeof why) < 0)
        return sbx_fail(p, 0, "%s", why);
    return 0;
}

/* Keeps [A-Za-z0-9_-] of the job id, at most 40 of them, so the name is always a plain one. */
static void sbx_workdir_sanitize(const char *id, char *dst, size_t n)
{
    size_t k = 0;
    for (; id && *id && k + 1 < n && k < 40; id++) {
        char c = *id;
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '-' || c == '_';
        dst[k++] = ok ? c : '_';
    }
    if (k == 0 && n > 4)
        k = (size_t)snprintf(dst, n, "anon");
    dst[k] = '\0';
}

/* Creates the directories of a validated relative path (sbx_path_ok) under in/. */
static int sbx_workdir_parents(sbx_proc *p, const char *name)
{
    char path[PATH_MAX + 300];
    int n = snprintf(path, sizeof path, "%s/%s", p->fs_in, name);
    if (n < 0 || (size_t)n >= sizeof path)
        return sbx_fail(p, ENAMETOOLONG, "input %s", name);
    for (char *s = path + strlen(p->fs_in) + 1; (s = strchr(s, '/')) != NULL; s++) {
        *s = '\0';
        if (mkdir(path, 0755) < 0 && errno != EEXIST)
            return sbx_fail(p, errno, "mkdir(%s)", path);
        *s = '/';
    }
    return 0;
}

static int sbx_workdir_write(sbx_proc *p, const char *name, const char *data, size_t len)
{
    char path[PATH_MAX + 300];
    if (sbx_workdir_parents(p, name) < 0)
        return -1;
    snprintf(path, sizeof path, "%s/%s", p->fs_in, name);
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0)
        return sbx_fail(p, errno, "open(%s)", path);
    for (size_t off = 0; off < len;) {
        ssize_t w = write(fd, data + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            int e = w < 0 ? errno : EIO;
            close(fd);
            return sbx_fail(p, e, "write(%s)", path);
        }
        off += (size_t)w;
    }
    if (close(fd) < 0)
        return sbx_fail(p, errno, "close(%s)", path);
    return 0;
}

/* mkdtemp, then an flock(LOCK_EX) on the new directory held until sbx_workdir_collect has
 * removed it: the lock says "my creator lives" to sbx_workdir_sweep, without pids (several
 * workers may share the root; a pid can be reused). The descriptor is CLOEXEC and the job's
 * first process closes every descriptor above its own five before it waits for go (sbx_init.c), so no
 * process of the job keeps the lock. A sweep may lock and remove the directory between the
 * mkdtemp and our flock: then the flock fails (it holds it) or the directory has no links
 * left (it removed it), and another name is tried. */
static int sbx_workdir_make_locked(sbx_proc *p, const char *tmpl, size_t n)
{
    for (int tries = 0; tries < 8; tries++) {
        char path[PATH_MAX];
        memcpy(path, tmpl, n + 1);
        if (!mkdtemp(path))
            return sbx_fail(p, errno, "mkdtemp(%s)", path);
        int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
            return sbx_fail(p, errno, "open(%s)", path);
        struct stat st;
        int rc = flock(fd, LOCK_EX | LOCK_NB) < 0 ? (errno == EWOULDBLOCK ? 1 : -1)
                 : fstat(fd, &st) < 0            ? -1
                 : st.st_nlink == 0              ? 1
                                                 : 0;
        if (rc == 0) {
            p->workdir_lock = fd;
            memcpy(p->workdir, path, n + 1);
            return 0;
        }
        int e = errno;
        close(fd);
        if (rc < 0)
            return sbx_fail(p, e, "flock/fstat(%s)", path);
    }
    return sbx_fail(p, EAGAIN, "staging directory under %s: removed by sweeps 8 times", p->work_root);
}

static int sbx_workdir_prepare(sbx_proc *p)
{
    if (sbx_workdir_root(p) < 0)
        return -1;
    char id[48];
    sbx_workdir_sanitize(p->job_id, id, sizeof id);
    char tmpl[PATH_MAX];
    int n = snprintf(tmpl, sizeof tmpl, "%s/job-%s-XXXXXX", p->work_root, id);
    if (n < 0 || (size_t)n >= sizeof tmpl)
        return sbx_fail(p, ENAMETOOLONG, "work root %s", p->work_root);
    if (sbx_workdir_make_locked(p, tmpl, (size_t)n) < 0)
        return -1;
    snprintf(p->fs_in, sizeof p->fs_in, "%s/in", p->workdir);
    snprintf(p->fs_out, sizeof p->fs_out, "%s/out", p->workdir);
    snprintf(p->fs_root, sizeof p->fs_root, "%s/root", p->workdir);
    snprintf(p->fs_scratch, sizeof p->fs_scratch, "%s/scratch", p->workdir);
    const char *dirs[] = {p->fs_in, p->fs_out, p->fs_root, p->fs_scratch};
    for (int i = 0; i < 4; i++)
        if (mkdir(dirs[i], 0700) < 0)
            return sbx_fail(p, errno, "mkdir(%s)", dirs[i]);
    if (p->prelude && sbx_workdir_write(p, SBX_PRELUDE_NAME, p->prelude, p->prelude_len) < 0)
        return -1;
    for (size_t i = 0; i < p->nfiles; i++)
        if (sbx_workdir_write(p, p->files[i].path, p->files[i].data, p->files[i].len) < 0)
            return -1;
    return sbx_workdir_write(p, "main.py", p->code, p->code_len);
}

static void sbx_workdir_unlock(sbx_proc *p)
{
    if (p->workdir_lock >= 0)
        close(p->workdir_lock);
    p->workdir_lock = -1;
}

/* Unlocked after the removal, also a failed one: the sweep then tries again later. */
static int sbx_workdir_collect(sbx_proc *p)
{
    if (!p->workdir[0]) {
        sbx_workdir_unlock(p);
        return 0;
    }
    char why[200];
    int rc = sbx_rmtree(p->workdir, why, sizeof why);
    int e = errno;
    sbx_workdir_unlock(p);
    if (rc < 0)
        return sbx_fail(p, e, "remove %s: %s", p->workdir, why);
    p->workdir[0] = '\0';
    return 0;
}

/* Removes root/name if no process holds its lock; 1 removed, 0 left alone, -1 failed. */
static int sbx_workdir_sweep_one(int rfd, const char *root, const char *name)
{
    int fd = openat(rfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return 0; /* gone meanwhile, or not a directory (a symlink): not ours to follow */
    if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
        close(fd);
        return 0; /* a live job's */
    }
    char path[PATH_MAX], why[200];
    int rc = 0;
    if ((size_t)snprintf(path, sizeof path, "%s/%s", root, name) >= sizeof path)
        rc = -1;
    else
        rc = sbx_rmtree(path, why, sizeof why) < 0 ? -1 : 1;
    close(fd); /* after the removal: a creator racing us sees a directory without links */
    return rc;
}

int sbx_workdir_sweep(const sbx_config *c)
{
    sbx_config def;
    sbx_config_default(&def);
    const char *root = c && c->work_root ? c->work_root : def.work_root;
    char why[PATH_MAX + 80];
    if (sbx_workdir_root_check(root, why, sizeof why) < 0)
        return -1;
    int rfd = open(root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    DIR *d = rfd >= 0 ? fdopendir(rfd) : NULL;
    if (!d) {
        if (rfd >= 0)
            close(rfd);
        return -1;
    }
    int removed = 0;
    /* Bounded by the directory's size; names are read first-to-last once. */
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        if (strncmp(e->d_name, "job-", 4) == 0 && sbx_workdir_sweep_one(dirfd(d), root, e->d_name) > 0)
            removed++;
    closedir(d);
    return removed;
}

const sbx_layer sbx_layer_workdir = {
    .name = "workdir",
    .prepare = sbx_workdir_prepare,
    .collect = sbx_workdir_collect,
};

/* ---- removal ---- */

typedef struct {
    int top;              /* the job directory, where deep subtrees are hoisted */
    unsigned long budget; /* steps left */
    unsigned long hoisted;
    char *why;
    size_t whylen;
} sbx_rm;

static int sbx_rm_err(sbx_rm *c, int err, const char *call, const char *name)
{
    snprintf(c->why, c->whylen, "%s(%s)", call, name);
    errno = err;
    return -1;
}

static int sbx_rm_at(sbx_rm *c, int dfd, const char *name, int depth);

/* Removes every entry of the directory fd (which it closes). */
static int sbx_rm_contents(sbx_rm *c, int fd, int depth)
{
    DIR *d = fdopendir(fd);
    if (!d) {
        int e = errno;
        close(fd);
        return sbx_rm_err(c, e, "fdopendir", ".");
    }
    int rc = 0;
    struct dirent *e;
    while (rc == 0 && (errno = 0, e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        rc = sbx_rm_at(c, dirfd(d), e->d_name, depth);
    }
    if (rc == 0 && errno != 0)
        rc = sbx_rm_err(c, errno, "readdir", ".");
    closedir(d);
    return rc;
}

/* Renames a too-deep directory to the top under a fresh name; a later pass removes it. */
static int sbx_rm_hoist(sbx_rm *c, int dfd, const char *name)
{
    for (int tries = 0; tries < 1000; tries++) {
        char to[64];
        snprintf(to, sizeof to, ".sbx-hoist-%lu", c->hoisted++);
        if (renameat2(dfd, name, c->top, to, RENAME_NOREPLACE) == 0)
            return 0;
        if (errno != EEXIST)
            return sbx_rm_err(c, errno, "renameat2", name);
    }
    return sbx_rm_err(c, EEXIST, "renameat2", name);
}

static int sbx_rm_at(sbx_rm *c, int dfd, const char *name, int depth)
{
    if (c->budget == 0)
        return sbx_rm_err(c, E2BIG, "remove", name);
    c->budget--;
    if (unlinkat(dfd, name, 0) == 0 || errno == ENOENT)
        return 0;
    if (errno != EISDIR)
        return sbx_rm_err(c, errno, "unlinkat", name);
    if (depth >= SBX_RM_DEPTH)
        return sbx_rm_hoist(c, dfd, name);
    int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return sbx_rm_err(c, errno, "openat", name);
    if (depth == 0 && (c->top = dup(fd)) < 0) {
        int e = errno;
        close(fd);
        return sbx_rm_err(c, e, "dup", name);
    }
    int rc = sbx_rm_contents(c, fd, depth + 1);
    if (depth == 0) {
        close(c->top);
        c->top = -1;
    }
    if (rc < 0)
        return rc;
    if (unlinkat(dfd, name, AT_REMOVEDIR) == 0 || errno == ENOENT)
        return 0;
    /* Only the top can refill during a pass (hoisted subtrees); the caller comes back. */
    if (errno == ENOTEMPTY && depth == 0)
        return 0;
    return sbx_rm_err(c, errno, "unlinkat", name);
}

int sbx_rmtree(const char *path, char *why, size_t whylen)
{
    const char *slash = strrchr(path, '/');
    if (!slash || slash == path || !slash[1]) {
        snprintf(why, whylen, "not a removable path");
        errno = EINVAL;
        return -1;
    }
    char parent[PATH_MAX];
    snprintf(parent, sizeof parent, "%.*s", (int)(slash - path), path);
    const char *name = slash + 1;
    int pfd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (pfd < 0) {
        snprintf(why, whylen, "open(%s)", parent);
        return -1;
    }
    sbx_rm c = {.top = -1, .budget = SBX_RM_BUDGET, .why = why, .whylen = whylen};
    int rc = 0;
    /* Each pass consumes budget, so this ends; it stops when the directory is gone. */
    while (rc == 0) {
        struct stat st;
        if (fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
            if (errno != ENOENT)
                rc = sbx_rm_err(&c, errno, "fstatat", name);
            break;
        }
        rc = sbx_rm_at(&c, pfd, name, 0);
    }
    int e = errno;
    close(pfd);
    errno = e;
    return rc;
}
