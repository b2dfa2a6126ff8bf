/* sbx_net.c: no network at all.
 *
 * A new network namespace holds one interface, loopback, and it is down; we configure
 * nothing, so every connect() fails (ENETUNREACH), the host's 127.0.0.1 included, and
 * abstract unix sockets of the host are out of reach too. The init checks that loopback is
 * really down rather than trusting the kernel's default: it is the whole of this layer.
 * In zygote mode the namespace is made ahead of the job by its pre-forked supervisor
 * (sbx_zygote_serve.c, sbx_net_premade): the init inherits it instead of cloning one, still
 * one fresh namespace per job, and the same check runs in it.
 */
#include "sbx_int.h"

#include <errno.h>
#include <net/if.h>
#include <sched.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

bool sbx_net_premade;

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
