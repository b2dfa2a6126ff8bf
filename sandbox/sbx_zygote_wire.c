/* sbx_zygote_wire.c: a job going to the zygote, and its result coming back, as one memfd each.
 *
 * A memfd rather than the control socket itself: a result carries up to two output caps and
 * every artifact (megabytes), far above what one SOCK_SEQPACKET message may hold, and the fd
 * passes with SCM_RIGHTS in the same message as the request. The layout is a fixed header
 * followed by length-prefixed byte strings; every length is checked against the mapping before
 * use, so a corrupt or hostile memfd gives an error, never a read out of bounds. The zygote
 * never runs job code itself, but the result's reader (the worker) still treats it as input.
 */
#include "sbx_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

enum { SBX_WIRE_MAGIC_JOB = 0x7a6a6f62, SBX_WIRE_MAGIC_RES = 0x7a726573 };

typedef struct {
    uint32_t magic;
    sbx_limits limits;
    uint32_t nfiles;
    uint8_t has_prelude;
} sbx_wire_job_head;

typedef struct {
    uint32_t magic;
    int32_t status, exit_code, signal;
    uint64_t out_total, err_total, wall_ms, cpu_ms, max_rss_kb;
    uint8_t out_trunc, err_trunc, artifacts_truncated, code_obj_used;
    uint8_t unstarted, cgroup_born;
    uint32_t nartifacts;
    char message[256];
    char profile[32];
} sbx_wire_res_head;

static int sbx_wire_err(char *why, size_t n, int err, const char *what)
{
    snprintf(why, n, SBX_PREFIX "zygote wire: %s%s%s", what, err ? ": " : "",
             err ? strerrordesc_np(err) : "");
    return -1;
}

static int sbx_wire_write(int fd, const void *b, size_t n)
{
    const char *c = b;
    while (n) {
        ssize_t w = write(fd, c, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        c += w;
        n -= (size_t)w;
    }
    return 0;
}

static int sbx_wire_str(int fd, const char *s, size_t n)
{
    uint64_t len = n;
    return sbx_wire_write(fd, &len, sizeof len) < 0 || sbx_wire_write(fd, s ? s : "", n) < 0 ? -1
                                                                                          : 0;
}

/* A reader over a mapping: every take is bounds-checked. */
typedef struct {
    const char *at, *end;
} sbx_wire_rd;

static const char *sbx_wire_take(sbx_wire_rd *r, size_t n)
{
    if ((size_t)(r->end - r->at) < n)
        return NULL;
    const char *c = r->at;
    r->at += n;
    return c;
}

static const char *sbx_wire_take_str(sbx_wire_rd *r, size_t *n)
{
    uint64_t len;
    const char *l = sbx_wire_take(r, sizeof len);
    if (!l)
        return NULL;
    memcpy(&len, l, sizeof len);
    if (len > (uint64_t)(r->end - r->at))
        return NULL;
    *n = (size_t)len;
    return sbx_wire_take(r, *n);
}

static int sbx_wire_new(const char *name, char *why, size_t whylen)
{
    int fd = memfd_create(name, MFD_CLOEXEC);
    if (fd < 0)
        sbx_wire_err(why, whylen, errno, "memfd_create");
    return fd;
}

int sbx_wire_put_job(const sbx_job *job, char *why, size_t whylen)
{
    int fd = sbx_wire_new("codeq-job", why, whylen);
    if (fd < 0)
        return -1;
    sbx_wire_job_head h = {.magic = SBX_WIRE_MAGIC_JOB, .limits = job->limits,
                           .nfiles = (uint32_t)job->nfiles, .has_prelude = job->prelude != NULL};
    int rc = sbx_wire_write(fd, &h, sizeof h);
    rc |= sbx_wire_str(fd, job->code, job->code_len);
    rc |= sbx_wire_str(fd, job->stdin_data, job->stdin_len);
    rc |= sbx_wire_str(fd, job->prelude, job->prelude ? job->prelude_len : 0);
    rc |= sbx_wire_str(fd, job->job_id, job->job_id ? strlen(job->job_id) : 0);
    for (size_t i = 0; rc == 0 && i < job->nfiles; i++) {
        rc |= sbx_wire_str(fd, job->files[i].path, strlen(job->files[i].path));
        rc |= sbx_wire_str(fd, job->files[i].data, job->files[i].len);
    }
    /* Last, so the layout before it is unchanged: the code object (empty: none). */
    rc |= sbx_wire_str(fd, job->code_obj, job->code_obj ? job->code_obj_len : 0);
    if (rc < 0) {
        sbx_wire_err(why, whylen, errno, "write(job)");
        close(fd);
        return -1;
    }
    return fd;
}

static void *sbx_wire_map(int fd, size_t *len, char *why, size_t whylen)
{
    struct stat st;
    if (fstat(fd, &st) < 0) {
        sbx_wire_err(why, whylen, errno, "fstat");
        return NULL;
    }
    *len = (size_t)st.st_size;
    if (*len == 0) {
        sbx_wire_err(why, whylen, 0, "empty message");
        return NULL;
    }
    void *m = mmap(NULL, *len, PROT_READ, MAP_PRIVATE, fd, 0);
    if (m == MAP_FAILED) {
        sbx_wire_err(why, whylen, errno, "mmap");
        return NULL;
    }
    return m;
}

/* The job's strings point into the mapping (and strings that must be NUL-terminated are
 * copied into files/job_id storage allocated here); the caller munmaps and frees after the
 * job started (sbx_start copies what it keeps). */
int sbx_wire_get_job(int fd, sbx_job *job, void **map, size_t *maplen, sbx_file **files,
                     char *why, size_t whylen)
{
    *files = NULL;
    if (!(*map = sbx_wire_map(fd, maplen, why, whylen)))
        return -1;
    sbx_wire_rd r = {*map, (const char *)*map + *maplen};
    sbx_wire_job_head h;
    const char *hp = sbx_wire_take(&r, sizeof h);
    if (!hp)
        return sbx_wire_err(why, whylen, 0, "short job");
    memcpy(&h, hp, sizeof h);
    if (h.magic != SBX_WIRE_MAGIC_JOB || h.nfiles > SBX_MAX_FILES)
        return sbx_wire_err(why, whylen, 0, "bad job header");
    memset(job, 0, sizeof *job);
    job->limits = h.limits;
    size_t idlen;
    const char *id;
    if (!(job->code = sbx_wire_take_str(&r, &job->code_len)) ||
        !(job->stdin_data = sbx_wire_take_str(&r, &job->stdin_len)) ||
        !(job->prelude = sbx_wire_take_str(&r, &job->prelude_len)) ||
        !(id = sbx_wire_take_str(&r, &idlen)))
        return sbx_wire_err(why, whylen, 0, "short job");
    if (!h.has_prelude)
        job->prelude = NULL;
    /* One allocation: the file table, then NUL-terminated copies of the paths and the id. */
    size_t need = h.nfiles * sizeof(sbx_file) + idlen + 1 + h.nfiles * (SBX_PATH_MAX + 1);
    char *mem = calloc(1, need);
    if (!mem)
        return sbx_wire_err(why, whylen, ENOMEM, "job");
    *files = (sbx_file *)mem;
    char *str = mem + h.nfiles * sizeof(sbx_file);
    memcpy(str, id, idlen);
    job->job_id = str;
    str += idlen + 1;
    for (uint32_t i = 0; i < h.nfiles; i++) {
        size_t plen;
        const char *path = sbx_wire_take_str(&r, &plen);
        if (!path || plen > SBX_PATH_MAX ||
            !((*files)[i].data = sbx_wire_take_str(&r, &(*files)[i].len)))
            return sbx_wire_err(why, whylen, 0, "bad file entry");
        memcpy(str, path, plen);
        (*files)[i].path = str;
        str += SBX_PATH_MAX + 1;
    }
    job->files = *files;
    job->nfiles = h.nfiles;
    if (!(job->code_obj = sbx_wire_take_str(&r, &job->code_obj_len)))
        return sbx_wire_err(why, whylen, 0, "short job");
    if (!job->code_obj_len)
        job->code_obj = NULL;
    return 0;
}

int sbx_wire_put_result(const sbx_result *res, char *why, size_t whylen)
{
    int fd = sbx_wire_new("codeq-result", why, whylen);
    if (fd < 0)
        return -1;
    sbx_wire_res_head h = {
        .magic = SBX_WIRE_MAGIC_RES, .status = res->status, .exit_code = res->exit_code,
        .signal = res->signal, .out_total = res->out.total, .err_total = res->err.total,
        .wall_ms = res->wall_ms, .cpu_ms = res->cpu_ms, .max_rss_kb = res->max_rss_kb,
        .out_trunc = res->out.truncated, .err_trunc = res->err.truncated,
        .artifacts_truncated = res->artifacts_truncated, .nartifacts = (uint32_t)res->nartifacts,
        .code_obj_used = res->code_obj_used, .unstarted = res->unstarted,
        .cgroup_born = res->cgroup_born,
    };
    snprintf(h.message, sizeof h.message, "%s", res->message);
    snprintf(h.profile, sizeof h.profile, "%s", res->profile ? res->profile : "");
    int rc = sbx_wire_write(fd, &h, sizeof h);
    rc |= sbx_wire_str(fd, res->out.data, res->out.len);
    rc |= sbx_wire_str(fd, res->err.data, res->err.len);
    for (size_t i = 0; rc == 0 && i < res->nartifacts; i++) {
        rc |= sbx_wire_str(fd, res->artifacts[i].path, strlen(res->artifacts[i].path));
        rc |= sbx_wire_str(fd, res->artifacts[i].data, res->artifacts[i].len);
    }
    if (rc < 0) {
        sbx_wire_err(why, whylen, errno, "write(result)");
        close(fd);
        return -1;
    }
    return fd;
}

static char *sbx_wire_dup(const char *s, size_t n)
{
    char *d = malloc(n + 1);
    if (d) {
        memcpy(d, s, n);
        d[n] = '\0';
    }
    return d;
}

/* The profile string must be static (sbx_result.profile): it is looked up among ours. */
static const char *sbx_wire_profile(const char *name)
{
    for (size_t i = 0; sbx_profiles[i]; i++)
        if (strcmp(sbx_profiles[i], name) == 0)
            return sbx_profiles[i];
    return "unknown";
}

static int sbx_wire_fill(sbx_wire_rd *rd, sbx_result *r, const sbx_wire_res_head *h)
{
    size_t n;
    const char *s;
    if (!(s = sbx_wire_take_str(rd, &n)) || !(r->out.data = sbx_wire_dup(s, n)))
        return -1;
    r->out.len = n;
    if (!(s = sbx_wire_take_str(rd, &n)) || !(r->err.data = sbx_wire_dup(s, n)))
        return -1;
    r->err.len = n;
    if (h->nartifacts > 100000)
        return -1;
    if (h->nartifacts && !(r->artifacts = calloc(h->nartifacts, sizeof *r->artifacts)))
        return -1;
    for (uint32_t i = 0; i < h->nartifacts; i++) {
        size_t pl, dl;
        const char *path = sbx_wire_take_str(rd, &pl), *data;
        if (!path || !(data = sbx_wire_take_str(rd, &dl)))
            return -1;
        r->artifacts[i].path = sbx_wire_dup(path, pl);
        r->artifacts[i].data = sbx_wire_dup(data, dl);
        r->artifacts[i].len = dl;
        r->nartifacts = i + 1;
        if (!r->artifacts[i].path || !r->artifacts[i].data)
            return -1;
    }
    return 0;
}

/* Fills r (whose out/err data the caller has freed or never set) from the zygote's memfd. */
int sbx_wire_get_result(int fd, sbx_result *r, char *why, size_t whylen)
{
    size_t len;
    void *map = sbx_wire_map(fd, &len, why, whylen);
    if (!map)
        return -1;
    sbx_wire_rd rd = {map, (const char *)map + len};
    sbx_wire_res_head h;
    const char *hp = sbx_wire_take(&rd, sizeof h);
    int rc = -1;
    if (hp) {
        memcpy(&h, hp, sizeof h);
        h.message[sizeof h.message - 1] = h.profile[sizeof h.profile - 1] = '\0';
    }
    if (hp && h.magic == SBX_WIRE_MAGIC_RES && sbx_wire_fill(&rd, r, &h) == 0) {
        r->status = (sbx_status)h.status;
        r->exit_code = h.exit_code;
        r->signal = h.signal;
        r->out.total = h.out_total;
        r->err.total = h.err_total;
        r->out.truncated = h.out_trunc;
        r->err.truncated = h.err_trunc;
        r->wall_ms = h.wall_ms;
        r->cpu_ms = h.cpu_ms;
        r->max_rss_kb = h.max_rss_kb;
        r->artifacts_truncated = h.artifacts_truncated;
        r->code_obj_used = h.code_obj_used;
        r->cgroup_born = h.cgroup_born;
        r->unstarted = h.unstarted && r->status == SBX_INTERNAL;
        memcpy(r->message, h.message, sizeof r->message);
        r->profile = sbx_wire_profile(h.profile);
        rc = 0;
    } else {
        sbx_wire_err(why, whylen, 0, "bad result");
    }
    munmap(map, len);
    return rc;
}
