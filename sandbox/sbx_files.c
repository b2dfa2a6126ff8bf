/* sbx_files.c: input files in, artifacts out, and the rules for their names.
 *
 * Paths a job names are relative to /work and plain: no leading '/', no empty, "." or ".."
 * component, no NUL (the length says where a path ends), at most SBX_PATH_MAX bytes and
 * SBX_PATH_DEPTH components — so joining one to a directory can never leave it.
 * The copies run in the init (no malloc: getdents64 into a stack buffer, a static copy
 * buffer that is the init's private copy), both ways between the host staging directory and
 * the job's tmpfs. Copy-in trusts its source (the parent wrote it). Copy-out runs only after
 * every process of the job is dead, so nothing changes under it; still, the tree is the
 * job's: only regular files with one link are taken (lstat, then open with O_NOFOLLOW |
 * O_NONBLOCK and fstat again), never symlinks, hard links, FIFOs, sockets or devices; depth,
 * entries, files and bytes are all bounded. The parent then loads what the init copied,
 * drops inputs that came back unchanged, sorts by path and applies the job's caps.
 */
#include "sbx_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

enum { SBX_PATH_DEPTH = 16, SBX_COPY_ENTRIES = 4096 };

bool sbx_path_ok(const char *path, char *why, size_t whylen)
{
    const char *bad = NULL;
    size_t len = path ? strlen(path) : 0;
    int depth = 0;
    if (len == 0)
        bad = "empty";
    else if (len > SBX_PATH_MAX)
        bad = "longer than 255 bytes";
    else if (path[0] == '/')
        bad = "absolute";
    for (const char *s = path; !bad && s && *s;) {
        const char *e = strchr(s, '/');
        size_t n = e ? (size_t)(e - s) : strlen(s);
        if (n == 0 || (n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.'))
            bad = "'', '.' and '..' components are not allowed";
        else if (++depth > SBX_PATH_DEPTH)
            bad = "deeper than 16 components";
        s = e ? e + 1 : s + n;
        if (e && !*s)
            bad = "ends with '/'";
    }
    if (bad)
        snprintf(why, whylen, "%s", bad);
    return bad == NULL;
}

/* path is name itself or inside it: a file there would need name as a directory. */
static bool sbx_path_within(const char *path, const char *name)
{
    size_t n = strlen(name);
    return !strncmp(path, name, n) && (path[n] == '\0' || path[n] == '/');
}

/* Pages a regular file of len bytes takes on a tmpfs: its size is counted in whole pages. */
static uint64_t sbx_tmpfs_pages(uint64_t len, uint64_t page)
{
    return (len + page - 1) / page;
}

int sbx_files_check(const sbx_file *files, size_t n, size_t code_len, size_t prelude_len,
                    const sbx_limits *l, char *why, size_t whylen)
{
    char what[96];
    uint64_t total = 0, page = (uint64_t)sysconf(_SC_PAGESIZE);
    uint64_t pages = sbx_tmpfs_pages(code_len, page) + sbx_tmpfs_pages(prelude_len, page);
    if (n > SBX_MAX_FILES) {
        snprintf(why, whylen, "files: %zu above maximum %d", n, SBX_MAX_FILES);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        if (!files[i].path || (!files[i].data && files[i].len)) {
            snprintf(why, whylen, "files[%zu]: missing path or data", i);
            return -1;
        }
        if (!sbx_path_ok(files[i].path, what, sizeof what)) {
            snprintf(why, whylen, "files[%zu].path: %s", i, what);
            return -1;
        }
        if (sbx_path_within(files[i].path, "main.py") ||
            sbx_path_within(files[i].path, SBX_PRELUDE_NAME)) {
            snprintf(why, whylen, "files[%zu].path: %s is reserved", i, files[i].path);
            return -1;
        }
        for (size_t j = 0; j < i; j++)
            if (!strcmp(files[i].path, files[j].path)) {
                snprintf(why, whylen, "files[%zu].path: duplicate of files[%zu]", i, j);
                return -1;
            } else if (sbx_path_within(files[i].path, files[j].path) ||
                       sbx_path_within(files[j].path, files[i].path)) {
                snprintf(why, whylen, "files[%zu].path: '%s' and files[%zu].path '%s': one "
                         "would have to be both a file and a directory", i, files[i].path, j,
                         files[j].path);
                return -1;
            }
        total += files[i].len;
        pages += sbx_tmpfs_pages(files[i].len, page);
    }
    /* Staging would fail half-way (ENOSPC) on what the job asked for: say so before. */
    if (pages > ((uint64_t)l->tmpfs_mb << 20) / page) {
        snprintf(why, whylen, "files: above limits.tmpfs_mb %u: %llu bytes in %zu file%s need "
                 "%llu KiB of the job's tmpfs with main.py and the runtime guard (each file in "
                 "whole %llu-byte pages)", l->tmpfs_mb, (unsigned long long)total, n,
                 n == 1 ? "" : "s", (unsigned long long)(pages * page >> 10),
                 (unsigned long long)page);
        return -1;
    }
    if (whylen)
        why[0] = '\0';
    return 0;
}

/* ---- in the init ---- */

struct sbx_dirent64 {
    uint64_t d_ino;
    int64_t d_off;
    unsigned short d_reclen;
    unsigned char d_type;
    char d_name[];
};

typedef struct {
    sbx_proc *p;
    bool out;            /* copy-out: hostile source, budgets apply */
    uint64_t files_left, bytes_left;
    unsigned entries_left;
    int skipped;
} sbx_copy;

static char sbx_copy_buf[64 * 1024];

static int sbx_copy_data(sbx_copy *c, int from, int to, const char *name)
{
    for (;;) {
        ssize_t n = read(from, sbx_copy_buf, sizeof sbx_copy_buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return sbx_child_fail(c->p, errno, "read(", name, ")", NULL);
        if (n == 0)
            return 0;
        for (ssize_t off = 0; off < n;) {
            ssize_t w = write(to, sbx_copy_buf + off, (size_t)(n - off));
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0)
                return sbx_child_fail(c->p, w < 0 ? errno : EIO, "write(", name, ")", NULL);
            off += w;
        }
    }
}

/* One regular file; in copy-out anything else is counted as skipped. */
static int sbx_copy_file(sbx_copy *c, int sdir, int ddir, const char *name)
{
    int from = openat(sdir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (from < 0) {
        if (c->out) {
            c->skipped++;
            return 0;
        }
        return sbx_child_fail(c->p, errno, "open(", name, ")", NULL);
    }
    struct stat st;
    if (fstat(from, &st) < 0) {
        close(from);
        return sbx_child_fail(c->p, errno, "fstat(", name, ")", NULL);
    }
    if (c->out && (!S_ISREG(st.st_mode) || st.st_nlink != 1 || c->files_left == 0 ||
                   (uint64_t)st.st_size > c->bytes_left)) {
        close(from);
        c->skipped++;
        return 0;
    }
    int to = openat(ddir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (to < 0) {
        close(from);
        return sbx_child_fail(c->p, errno, "create(", name, ")", NULL);
    }
    int rc = sbx_copy_data(c, from, to, name);
    if (rc == 0 && !c->out && fchown(to, c->p->uid, c->p->gid) < 0)
        rc = sbx_child_fail(c->p, errno, "fchown(", name, ")", NULL);
    close(from);
    close(to);
    if (c->out && rc == 0) {
        c->files_left--;
        c->bytes_left -= (uint64_t)st.st_size;
    }
    return rc;
}

static int sbx_copy_tree(sbx_copy *c, int sdir, int ddir, int depth);

static int sbx_copy_dir(sbx_copy *c, int sdir, int ddir, const char *name, int depth)
{
    if (depth >= SBX_PATH_DEPTH) {
        c->skipped++;
        return 0;
    }
    if (mkdirat(ddir, name, 0755) < 0)
        return sbx_child_fail(c->p, errno, "mkdir(", name, ")", NULL);
    if (!c->out && fchownat(ddir, name, c->p->uid, c->p->gid, AT_SYMLINK_NOFOLLOW) < 0)
        return sbx_child_fail(c->p, errno, "chown(", name, ")", NULL);
    int s = openat(sdir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    int d = s < 0 ? -1 : openat(ddir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    int rc = s < 0 || d < 0 ? sbx_child_fail(c->p, errno, "open(", name, ")", NULL)
                            : sbx_copy_tree(c, s, d, depth + 1);
    if (s >= 0)
        close(s);
    if (d >= 0)
        close(d);
    return rc;
}

static int sbx_copy_entry(sbx_copy *c, int sdir, int ddir, const char *name, int depth)
{
    if (!strcmp(name, ".") || !strcmp(name, ".."))
        return 0;
    if (c->out && depth == 0 && (!strcmp(name, "main.py") || !strcmp(name, SBX_PRELUDE_NAME)))
        return 0;
    if (c->entries_left == 0) {
        c->skipped++;
        return 0;
    }
    c->entries_left--;
    struct stat st;
    if (fstatat(sdir, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        return sbx_child_fail(c->p, errno, "lstat(", name, ")", NULL);
    if (S_ISDIR(st.st_mode))
        return sbx_copy_dir(c, sdir, ddir, name, depth);
    if (S_ISREG(st.st_mode))
        return sbx_copy_file(c, sdir, ddir, name);
    c->skipped++;
    return 0;
}

static int sbx_copy_tree(sbx_copy *c, int sdir, int ddir, int depth)
{
    char buf[2048];
    for (;;) {
        long n = syscall(SYS_getdents64, sdir, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return sbx_child_fail(c->p, errno, "getdents64", NULL);
        if (n == 0)
            return 0;
        for (long off = 0; off < n;) {
            struct sbx_dirent64 *e = (struct sbx_dirent64 *)(buf + off);
            off += e->d_reclen;
            if (sbx_copy_entry(c, sdir, ddir, e->d_name, depth) < 0)
                return -1;
        }
    }
}

int sbx_files_copy_in(sbx_proc *p, int src_dfd, int dst_dfd)
{
    sbx_copy c = {.p = p, .entries_left = 4 * SBX_COPY_ENTRIES};
    return sbx_copy_tree(&c, src_dfd, dst_dfd, 0);
}

int sbx_files_copy_out(sbx_proc *p, int src_dfd, int dst_dfd, int *skipped)
{
    sbx_copy c = {.p = p, .out = true, .files_left = p->copy_files_left,
                  .bytes_left = p->copy_bytes_left, .entries_left = SBX_COPY_ENTRIES};
    int rc = sbx_copy_tree(&c, src_dfd, dst_dfd, 0);
    *skipped = c.skipped;
    return rc;
}

/* ---- in the parent ---- */

static uint64_t sbx_hash(const char *d, size_t n)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)d[i]) * 1099511628211ull;
    return h ^ ((uint64_t)n << 1);
}

/* Remembers each input's hash (to drop it if it comes back unchanged) and sizes the init's
 * copy-out budget: the operator's maxima plus the inputs (the init copies in directory order
 * and cannot tell inputs from new files; the job's own caps are applied by path order here,
 * in sbx_files_take). */
static int sbx_files_prepare(sbx_proc *p)
{
    uint64_t in_bytes = 0;
    if (p->nfiles) {
        p->input_sums = calloc(p->nfiles, sizeof *p->input_sums);
        p->input_paths = calloc(p->nfiles, sizeof *p->input_paths);
        if (!p->input_sums || !p->input_paths)
            return sbx_fail(p, ENOMEM, "files");
    }
    for (size_t i = 0; i < p->nfiles; i++) {
        if (!(p->input_paths[i] = strdup(p->files[i].path)))
            return sbx_fail(p, ENOMEM, "files");
        p->ninputs = i + 1;
        p->input_sums[i] = sbx_hash(p->files[i].data, p->files[i].len);
        in_bytes += p->files[i].len;
    }
    sbx_limits max;
    sbx_limits_max(&max);
    p->copy_files_left = (uint64_t)max.artifact_files + p->nfiles;
    p->copy_bytes_left = (uint64_t)max.artifact_bytes + in_bytes;
    return 0;
}

typedef struct {
    sbx_file *v;
    size_t n, alloc;
} sbx_flist;

static int sbx_flist_add(sbx_flist *l, char *path, char *data, size_t len)
{
    if (l->n == l->alloc) {
        size_t want = l->alloc ? 2 * l->alloc : 16;
        sbx_file *v = realloc(l->v, want * sizeof *v);
        if (!v)
            return -1;
        l->v = v;
        l->alloc = want;
    }
    l->v[l->n++] = (sbx_file){.path = path, .data = data, .len = len};
    return 0;
}

static char *sbx_read_all(const char *dir, const char *path, size_t len)
{
    char full[PATH_MAX + SBX_PATH_MAX + 16];
    snprintf(full, sizeof full, "%s/%s", dir, path);
    int fd = open(full, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    char *d = fd >= 0 ? malloc(len + 1) : NULL;
    ssize_t n = d ? pread(fd, d, len, 0) : -1;
    if (fd >= 0)
        close(fd);
    if (n != (ssize_t)len) {
        free(d);
        return NULL;
    }
    d[n] = '\0';
    return d;
}

/* Lists out/ (written by the init: directories and regular files only): paths and sizes. */
static int sbx_files_list(sbx_proc *p, int dfd, const char *prefix, int depth, sbx_flist *l)
{
    DIR *d = fdopendir(dfd);
    if (!d) {
        close(dfd);
        return sbx_fail(p, errno, "artifacts: fdopendir");
    }
    int rc = 0;
    for (struct dirent *e; rc == 0 && (e = readdir(d)) != NULL;) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        char path[SBX_PATH_MAX * 2 + 2];
        snprintf(path, sizeof path, "%s%s%s", prefix, *prefix ? "/" : "", e->d_name);
        struct stat st;
        if (strlen(path) > SBX_PATH_MAX || fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW)) {
            p->artifacts_skipped++;
            continue;
        }
        if (S_ISDIR(st.st_mode) && depth < SBX_PATH_DEPTH) {
            int sub = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            rc = sub < 0 ? sbx_fail(p, errno, "artifacts: open %s", path)
                         : sbx_files_list(p, sub, path, depth + 1, l);
            continue;
        }
        char *name = S_ISREG(st.st_mode) ? strdup(path) : NULL;
        if (!S_ISREG(st.st_mode))
            p->artifacts_skipped++;
        else if (!name || sbx_flist_add(l, name, NULL, (size_t)st.st_size) < 0) {
            free(name);
            rc = sbx_fail(p, ENOMEM, "artifacts");
        }
    }
    closedir(d);
    return rc;
}

static bool sbx_files_is_input(const sbx_proc *p, const char *path)
{
    for (size_t i = 0; i < p->ninputs; i++)
        if (!strcmp(p->input_paths[i], path))
            return true;
    return false;
}

static bool sbx_files_unchanged_input(const sbx_proc *p, const char *path, const char *d,
                                      size_t n)
{
    for (size_t i = 0; i < p->ninputs; i++)
        if (!strcmp(p->input_paths[i], path))
            return p->input_sums[i] == sbx_hash(d, n);
    return false;
}

static int sbx_file_cmp(const void *a, const void *b)
{
    return strcmp(((const sbx_file *)a)->path, ((const sbx_file *)b)->path);
}

/* In path order: drops inputs that came back unchanged, keeps what fits in artifact_files
 * and artifact_bytes, reads only what is kept. */
static int sbx_files_take(sbx_proc *p, sbx_flist *l)
{
    if (l->n > 1) /* l->v is NULL when the job left no files: qsort wants a pointer */
        qsort(l->v, l->n, sizeof *l->v, sbx_file_cmp);
    size_t keep = 0;
    uint64_t bytes = 0;
    int rc = 0;
    for (size_t i = 0; i < l->n; i++) {
        sbx_file *f = &l->v[i];
        bool fits = keep < p->limits.artifact_files && bytes + f->len <= p->limits.artifact_bytes;
        errno = 0;
        char *data = fits || sbx_files_is_input(p, f->path)
                         ? sbx_read_all(p->fs_out, f->path, f->len)
                         : NULL;
        if (data && sbx_files_unchanged_input(p, f->path, data, f->len)) {
            free(data);
            free((char *)f->path);
            continue;
        }
        if (fits && !data)
            rc = sbx_fail(p, errno ? errno : EIO, "artifacts: read %s", f->path);
        if (!fits || !data) {
            p->artifacts_skipped++;
            free(data);
            free((char *)f->path);
            continue;
        }
        bytes += f->len;
        l->v[keep++] = (sbx_file){.path = f->path, .data = data, .len = f->len};
    }
    l->n = keep;
    return rc;
}

/* The account hook: artifacts are part of the result, loaded before the verdict, not at the
 * teardown (sbx_proc.c). */
static int sbx_files_load_all(sbx_proc *p)
{
    if (!p->workdir[0] || !p->have_exit || p->failed)
        return 0;
    int dfd = open(p->fs_out, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dfd < 0)
        return sbx_fail(p, errno, "artifacts: open %s", p->fs_out);
    sbx_flist l = {0};
    int rc = sbx_files_list(p, dfd, "", 0, &l);
    if (sbx_files_take(p, &l) < 0)
        rc = -1;
    p->res.artifacts = l.n ? l.v : NULL;
    p->res.nartifacts = l.n;
    if (!l.n)
        free(l.v);
    p->res.artifacts_truncated = p->artifacts_skipped > 0;
    return rc;
}

static int sbx_files_collect(sbx_proc *p)
{
    for (size_t i = 0; i < p->ninputs; i++)
        free(p->input_paths[i]);
    free(p->input_paths);
    free(p->input_sums);
    p->input_paths = NULL;
    p->input_sums = NULL;
    p->ninputs = 0;
    return 0;
}

const sbx_layer sbx_layer_files = {
    .name = "files",
    .prepare = sbx_files_prepare,
    .account = sbx_files_load_all,
    .collect = sbx_files_collect,
};
