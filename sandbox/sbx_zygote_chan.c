/* sbx_zygote_chan.c: one message on the zygote's control socket, with an optional descriptor.
 *
 * Received descriptors are CLOEXEC at once (MSG_CMSG_CLOEXEC), and any more than the one we
 * expect are closed: a confused or compromised peer cannot leak descriptors into us.
 */
#include "sbx_int.h"
#include "sbx_zygote.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>


int sbx_zy_send(int sock, const sbx_zy_msg *m, int fd)
{
    struct iovec iov = {.iov_base = (void *)m, .iov_len = sizeof *m};
    union {
        char buf[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } u;
    struct msghdr h = {.msg_iov = &iov, .msg_iovlen = 1};
    if (fd >= 0) {
        memset(&u, 0, sizeof u);
        h.msg_control = u.buf;
        h.msg_controllen = sizeof u.buf;
        struct cmsghdr *c = CMSG_FIRSTHDR(&h);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(c), &fd, sizeof fd);
    }
    ssize_t n;
    do
        n = sendmsg(sock, &h, MSG_NOSIGNAL | MSG_DONTWAIT);
    while (n < 0 && errno == EINTR);
    if (n >= 0 && n != (ssize_t)sizeof *m)
        errno = EMSGSIZE;
    return n == (ssize_t)sizeof *m ? 0 : -1;
}

ssize_t sbx_zy_recv(int sock, sbx_zy_msg *m, int *fd, int flags)
{
    struct iovec iov = {.iov_base = m, .iov_len = sizeof *m};
    union {
        char buf[CMSG_SPACE(4 * sizeof(int))];
        struct cmsghdr align;
    } u;
    struct msghdr h = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
                       .msg_controllen = sizeof u.buf};
    *fd = -1;
    memset(m, 0, sizeof *m);
    ssize_t n = recvmsg(sock, &h, flags | MSG_CMSG_CLOEXEC);
    if (n < 0)
        return n;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&h); c; c = CMSG_NXTHDR(&h, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
            continue;
        size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t i = 0; i < k; i++) {
            int got;
            memcpy(&got, CMSG_DATA(c) + i * sizeof(int), sizeof got);
            if (*fd < 0)
                *fd = got;
            else
                close(got);
        }
    }
    m->text[sizeof m->text - 1] = '\0';
    return n;
}
