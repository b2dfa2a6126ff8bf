/* sbx_capture.c: the job's stdin, stdout and stderr.
 *
 * stdin is a sealed memfd holding all of stdin_data: the job reads it at its own pace and
 * gets EOF at the end, and the parent never blocks or juggles a third pipe. The seals make it
 * read-only to the job even though the descriptor is O_RDWR.
 * stdout and stderr are two pipes whose read ends are non-blocking in the parent and drained
 * together, so a job filling one while we wait on the other cannot deadlock. Each stream keeps
 * its first output_bytes; what comes after is counted in `total` and dropped, and the first
 * overflow makes sbx_proc.c kill the job. The child ends become fds 0-2 in sbx_init.c, which
 * places every descriptor of the init at once.
 */
#include "sbx_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

enum { SBX_READ_CHUNK = 64 * 1024, SBX_READS_PER_SERVICE = 16, SBX_READS_FINAL = 4096 };

static int sbx_capture_stdin(sbx_proc *p)
{
    int fd = memfd_create("codeq-stdin", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0)
        return sbx_fail(p, errno, "memfd_create(stdin)");
    p->stdin_fd = fd;
    for (size_t off = 0; off < p->stdin_len;) {
        ssize_t w = write(fd, p->stdin_data + off, p->stdin_len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return sbx_fail(p, w < 0 ? errno : EIO, "write(stdin memfd)");
        off += (size_t)w;
    }
    int seals = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL;
    if (fcntl(fd, F_ADD_SEALS, seals) < 0)
        return sbx_fail(p, errno, "fcntl(stdin memfd, F_ADD_SEALS)");
    if (lseek(fd, 0, SEEK_SET) < 0)
        return sbx_fail(p, errno, "lseek(stdin memfd)");
    return 0;
}

static int sbx_capture_stream(sbx_proc *p, sbx_stream *s, int *child_end)
{
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) < 0)
        return sbx_fail(p, errno, "pipe2(%s)", s->name);
    s->fd = fds[0];
    *child_end = fds[1];
    if (fcntl(s->fd, F_SETFL, O_NONBLOCK) < 0)
        return sbx_fail(p, errno, "fcntl(%s, O_NONBLOCK)", s->name);
    s->cap = p->limits.output_bytes;
    return 0;
}

static int sbx_capture_prepare(sbx_proc *p)
{
    if (sbx_capture_stdin(p) < 0)
        return -1;
    if (sbx_capture_stream(p, &p->out, &p->out_wr) < 0)
        return -1;
    return sbx_capture_stream(p, &p->err, &p->err_wr);
}

void sbx_close(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

/* Only the job may hold the write ends, or EOF would never come. */
static int sbx_capture_from_parent(sbx_proc *p)
{
    sbx_close(&p->out_wr);
    sbx_close(&p->err_wr);
    sbx_close(&p->stdin_fd);
    return 0;
}

static int sbx_capture_collect(sbx_proc *p)
{
    sbx_close(&p->out_wr);
    sbx_close(&p->err_wr);
    sbx_close(&p->stdin_fd);
    sbx_close(&p->out.fd);
    sbx_close(&p->err.fd);
    return 0;
}

const sbx_layer sbx_layer_capture = {
    .name = "capture",
    .prepare = sbx_capture_prepare,
    .from_parent = sbx_capture_from_parent,
    .collect = sbx_capture_collect,
};

static int sbx_capture_keep(sbx_proc *p, sbx_stream *s, const char *data, size_t n)
{
    sbx_buf *b = s->buf;
    size_t take = s->cap - b->len < n ? s->cap - b->len : n;
    if (b->len + take + 1 > s->alloc) {
        size_t want = s->alloc * 2 > b->len + take + 1 ? s->alloc * 2 : b->len + take + 1;
        if (want < 4096)
            want = 4096;
        if (want > s->cap + 1)
            want = s->cap + 1;
        char *d = realloc(b->data, want);
        if (!d)
            return sbx_fail(p, ENOMEM, "capture %s", s->name);
        b->data = d;
        s->alloc = want;
    }
    memcpy(b->data + b->len, data, take);
    b->len += take;
    b->data[b->len] = '\0';
    b->total += n;
    b->truncated = b->total > b->len;
    return 0;
}

/* Reads what is there, never waits; `final` drains a pipe whose writers are all dead. */
static void sbx_capture_stream_read(sbx_proc *p, sbx_stream *s, bool final)
{
    char chunk[SBX_READ_CHUNK];
    int reads = final ? SBX_READS_FINAL : SBX_READS_PER_SERVICE;
    while (s->fd >= 0 && reads-- > 0) {
        ssize_t n = read(s->fd, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN)
            return;
        if (n <= 0) {
            if (n < 0)
                sbx_fail(p, errno, "read(%s)", s->name);
            sbx_close(&s->fd);
            return;
        }
        if (sbx_capture_keep(p, s, chunk, (size_t)n) < 0) {
            sbx_close(&s->fd);
            return;
        }
    }
}

void sbx_capture_read(sbx_proc *p, bool final)
{
    sbx_capture_stream_read(p, &p->out, final);
    sbx_capture_stream_read(p, &p->err, final);
}

bool sbx_capture_overflow(sbx_proc *p)
{
    if (p->out.buf->total > p->out.cap)
        p->kill_stream = p->out.name;
    else if (p->err.buf->total > p->err.cap)
        p->kill_stream = p->err.name;
    return p->kill_stream != NULL;
}
