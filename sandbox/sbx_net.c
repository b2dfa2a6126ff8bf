/* sbx_net.c: no network at all.
 *
 * A new network namespace holds one interface, loopback, and it is down; we configure
 * nothing, so every connect() fails (ENETUNREACH), the host's 127.0.0.1 included, and
 * abstract unix sockets of the host are out of reach too. The init (in a zygote, the job's
 * main process, which takes the init's steps) checks that loopback is really down rather than
 * trusting the kernel's default.
 *
 * A zygote's jobs run one after another, and they take turns in one namespace the zygote
 * made (sbx_net_share) instead of a new one each: creating and destroying a namespace costs
 * ~1 ms of CPU per job here (setup_net, and cleanup_net in a kernel worker). What a job can
 * leave in a namespace with loopback down and no capability in it is sockets, and a socket
 * outlives the job's processes (all killed and reaped by its supervisor, the job's pid 1,
 * before the next job is handed over) only while a unix socket carries it, or itself, in
 * flight. So the process that joins (sbx_net_join: the job's main process, before the job's
 * code runs) first looks for any socket in the namespace, and if it finds one, it
 * leaves for a new, empty namespace of its own: a job never sees anything of another's.
 */
#include "sbx_int.h"

#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

int sbx_net_shared = -1;

int sbx_net_share(char *why, size_t whylen)
{
    const char *step = "open(/proc/self/ns/net)";
    int home = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC), err = 0;
    if (home < 0)
        goto fail;
    step = "unshare(CLONE_NEWNET)";
    if (unshare(CLONE_NEWNET) < 0)
        goto fail;
    int shared = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
    err = errno;
    /* Back home, or every socket this process makes later lands in the jobs' namespace. */
    step = "setns(back to its own network namespace)";
    if (setns(home, CLONE_NEWNET) < 0) {
        if (shared >= 0)
            close(shared);
        goto fail;
    }
    close(home);
    if (shared < 0) {
        snprintf(why, whylen, SBX_PREFIX "zygote: open(the jobs' network namespace): %s",
                 strerrordesc_np(err));
        return -1;
    }
    sbx_net_shared = shared;
    return 0;
fail:
    err = errno;
    if (home >= 0)
        close(home);
    snprintf(why, whylen, SBX_PREFIX "zygote: %s: %s", step, strerrordesc_np(err));
    return -1;
}

int sbx_net_renew(char *why, size_t whylen)
{
    if (sbx_net_shared >= 0)
        close(sbx_net_shared);
    sbx_net_shared = -1; /* until the new one is made: a new one per job */
    return sbx_net_share(why, whylen);
}

/* The number after `key` in text, or -1. */
static long sbx_net_count(const char *text, const char *key)
{
    const char *at = strstr(text, key);
    if (!at)
        return -1;
    at += strlen(key);
    long n = -1;
    for (; *at >= '0' && *at <= '9'; at++)
        n = (n < 0 ? 0 : n * 10) + (*at - '0');
    return n;
}

/* /proc/self/net/sockstat counts this namespace's sockets of every family ("sockets: used",
 * unix ones included, a socket in flight too) and its TCP time-wait ones ("tw"). Its
 * per-protocol tables (/proc/net/tcp, udp, ...) walk the host's whole hash tables instead: 10 ms
 * a job here. Syscalls and string functions only: the child runs it. */
int sbx_net_sockets(void)
{
    int fd = open("/proc/self/net/sockstat", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    char buf[512];
    ssize_t n;
    do
        n = read(fd, buf, sizeof buf - 1);
    while (n < 0 && errno == EINTR);
    int err = errno;
    close(fd);
    if (n < 0) {
        errno = err;
        return -1;
    }
    buf[n] = '\0';
    long used = sbx_net_count(buf, "sockets: used "), tw = sbx_net_count(buf, " tw ");
    if (used < 0 || tw < 0) {
        errno = EPROTO; /* not the format this was written against: fail closed */
        return -1;
    }
    return used || tw ? 1 : 0;
}

bool sbx_net_turns(const sbx_proc *p)
{
    return p->inproc && sbx_net_shared >= 0;
}

int sbx_net_join(sbx_proc *p)
{
    if (!sbx_net_turns(p))
        return 0;
    if (setns(sbx_net_shared, CLONE_NEWNET) < 0)
        return sbx_child_fail(p, errno, "setns(the zygote's network namespace)", NULL);
    int used = sbx_net_sockets();
    if (used < 0)
        return sbx_child_fail(p, errno, "reading /proc/self/net/sockstat", NULL);
    if (used && unshare(CLONE_NEWNET) < 0)
        return sbx_child_fail(p, errno, "unshare(CLONE_NEWNET)", NULL);
    return 0;
}

static int sbx_net_enter_init(sbx_proc *p)
{
    int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (s < 0)
        return sbx_child_fail(p, errno, "socket(AF_INET)", NULL);
    struct ifreq ifr;
    memset(&ifr, 0, sizeof ifr);
    memcpy(ifr.ifr_name, "lo", 3);
    int rc = ioctl(s, SIOCGIFFLAGS, &ifr);
    int e = errno;
    close(s);
    if (rc < 0)
        return sbx_child_fail(p, e, "ioctl(lo, SIOCGIFFLAGS)", NULL);
    if (ifr.ifr_flags & IFF_UP)
        return sbx_child_fail(p, 0, "loopback is up in the job's network namespace", NULL);
    return 0;
}

const sbx_layer sbx_layer_net = {
    .name = "net",
    .clone_flag = CLONE_NEWNET,
    .clone_flag_name = "CLONE_NEWNET",
    .enter_init = sbx_net_enter_init,
};
