/* codeq broker: a zero-setup development broker, librdkafka's mock cluster on 127.0.0.1 with
 * codeq's topics pre-created (the mock has no CreateTopics and consumers do not auto-create).
 * For development only: everything is in memory, transactional offsets are not persisted and
 * read_committed is not emulated; tests of delivery guarantees use a real Kafka broker. It
 * answers no DescribeConfigs: workers and `codeq submit` see that its controller is none of its
 * brokers and use the producer's message.max.bytes (wrk_kafka.c).
 *
 * The 2.0.2 mock listens on an ephemeral port. --port adds a fixed bootstrap address: a relay
 * that forwards bootstrap connections to the mock. Clients then learn the mock's own address
 * from its metadata and connect there directly, so the relay only carries the first requests. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cli.h"
#include "wrk_internal.h"
/* after rdkafka.h, which wrk_internal.h includes */
#include <librdkafka/rdkafka_mock.h>

#define RELAY_MAX 64

static const char broker_help[] =
    "usage: codeq broker [OPTIONS]\n\n"
    "Start librdkafka's in-memory mock cluster on 127.0.0.1 with codeq's topics, print its\n"
    "bootstrap address on stdout, and serve until SIGTERM/SIGINT. Development only: no\n"
    "persistence, no read_committed, no durable transactional offsets, and each partition\n"
    "keeps only its last ~5 MB (librdkafka 2.0's mock): a larger record is lost unread.\n\n"
    "  -p, --port N              also accept bootstrap connections on 127.0.0.1:N\n"
    "      --partitions N        partitions per topic (default 4)\n"
    "      --jobs-topic T, --results-topic T, --audit-topic T, --dlq-topic T   topic names\n"
    "  -h, --help                this help\n";

static volatile sig_atomic_t stop_broker;
static void on_signal(int s) { (void)s; stop_broker = 1; }

typedef struct {
    int a, b; /* client side, mock side; -1 when free */
} relay_pair;

static int listen_on(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(fd, 16) < 0) {
        fprintf(stderr, "codeq: broker: listen 127.0.0.1:%d: %s\n", port, strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

static int connect_to(const char *hostport)
{
    char host[64];
    const char *colon = strrchr(hostport, ':');
    if (!colon || (size_t)(colon - hostport) >= sizeof host) return -1;
    memcpy(host, hostport, (size_t)(colon - hostport));
    host[colon - hostport] = '\0';
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(colon + 1))};
    if (inet_pton(AF_INET, host, &sa.sin_addr) != 1) return -1;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Copies what is readable from one side to the other; -1 when the pair should close. */
static int pump(int from, int to)
{
    char buf[65536];
    ssize_t n = read(from, buf, sizeof buf);
    if (n <= 0) return -1;
    for (ssize_t off = 0; off < n;) {
        ssize_t w = write(to, buf + off, (size_t)(n - off));
        if (w <= 0) return -1;
        off += w;
    }
    return 0;
}

static void relay_close(relay_pair *p)
{
    close(p->a);
    close(p->b);
    p->a = p->b = -1;
}

static void relay_serve(int lfd, const char *mock)
{
    relay_pair pairs[RELAY_MAX];
    struct pollfd fds[1 + 2 * RELAY_MAX];
    for (int i = 0; i < RELAY_MAX; i++) pairs[i].a = pairs[i].b = -1;
    while (!stop_broker) {
        int n = 0;
        fds[n++] = (struct pollfd){.fd = lfd, .events = POLLIN};
        for (int i = 0; i < RELAY_MAX; i++) {
            fds[n++] = (struct pollfd){.fd = pairs[i].a, .events = POLLIN};
            fds[n++] = (struct pollfd){.fd = pairs[i].b, .events = POLLIN};
        }
        if (poll(fds, (nfds_t)n, 500) <= 0) continue;
        for (int i = 0; i < RELAY_MAX; i++) {
            short ra = fds[1 + 2 * i].revents, rb = fds[2 + 2 * i].revents;
            if ((ra && pump(pairs[i].a, pairs[i].b) < 0) ||
                (rb && pairs[i].a >= 0 && pump(pairs[i].b, pairs[i].a) < 0))
                relay_close(&pairs[i]);
        }
        if (fds[0].revents & POLLIN) {
            int c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC), slot = -1;
            for (int i = 0; i < RELAY_MAX && slot < 0; i++)
                if (pairs[i].a < 0) slot = i;
            int m = c >= 0 && slot >= 0 ? connect_to(mock) : -1;
            if (m < 0) {
                if (c >= 0) close(c);
                continue;
            }
            pairs[slot] = (relay_pair){c, m};
        }
    }
    for (int i = 0; i < RELAY_MAX; i++)
        if (pairs[i].a >= 0) relay_close(&pairs[i]);
}

static rd_kafka_mock_cluster_t *start_mock(rd_kafka_t **rkp, const wrk_kafka_opts *o, int parts)
{
    char kerr[256];
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    rd_kafka_conf_set(conf, "log_level", "3", kerr, sizeof kerr);
    rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, kerr, sizeof kerr);
    if (!rk) {
        fprintf(stderr, "codeq: broker: rd_kafka_new: %s\n", kerr);
        return NULL;
    }
    rd_kafka_mock_cluster_t *mc = rd_kafka_mock_cluster_new(rk, 1);
    if (!mc) {
        fprintf(stderr, "codeq: broker: cannot create the mock cluster\n");
        rd_kafka_destroy(rk);
        return NULL;
    }
    const char *topics[] = {o->jobs_topic, o->results_topic, o->audit_topic, o->dlq_topic};
    for (int i = 0; i < 4; i++) {
        rd_kafka_resp_err_t e = rd_kafka_mock_topic_create(mc, topics[i], parts, 1);
        if (e) fprintf(stderr, "codeq: broker: create %s: %s\n", topics[i], rd_kafka_err2str(e));
    }
    *rkp = rk;
    return mc;
}

int cmd_broker(int argc, char **argv)
{
    static const struct option longopts[] = {
        CLI_KAFKA_LONGOPTS,
        {"port", required_argument, NULL, 'p'},
        {"partitions", required_argument, NULL, 'n'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    wrk_kafka_opts o;
    unsigned port = 0, parts = 4;
    int opt, lfd = -1;
    wrk_kafka_opts_default(&o);
    while ((opt = getopt_long(argc, argv, "p:h", longopts, NULL)) != -1) {
        int k = cli_kafka_opt(opt, optarg, &o);
        if (k < 0) return 2;
        if (k > 0) continue;
        if (opt == 'p' && cli_uint("port", optarg, &port) == 0) {
            if (port >= 1 && port <= 65535) continue;
            fprintf(stderr, "codeq: broker: --port %u: 1-65535\n", port);
            return 2;
        }
        if (opt == 'n' && cli_uint("partitions", optarg, &parts) == 0) continue;
        if (opt == 'h') { fputs(broker_help, stdout); return 0; }
        return cli_see_help("broker");
    }
    if (port && (lfd = listen_on((int)port)) < 0) return 1;
    rd_kafka_t *rk;
    rd_kafka_mock_cluster_t *mc = start_mock(&rk, &o, (int)parts);
    if (!mc) return 1;
    struct sigaction sa = {.sa_handler = on_signal};
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    const char *boot = rd_kafka_mock_cluster_bootstraps(mc);
    fprintf(stderr, "codeq: broker: development mock cluster (in memory, not for production)\n");
    if (lfd >= 0) printf("127.0.0.1:%u\n", port); else printf("%s\n", boot);
    fflush(stdout);
    if (lfd >= 0) relay_serve(lfd, boot);
    else while (!stop_broker) pause();
    if (lfd >= 0) close(lfd);
    rd_kafka_mock_cluster_destroy(mc);
    rd_kafka_destroy(rk);
    return 0;
}
