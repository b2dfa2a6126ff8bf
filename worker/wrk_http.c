/* The operator's HTTP endpoint: /metrics (Prometheus text), /healthz, /readyz. Served by
 * libmicrohttpd's own polling thread so a stalled job loop can still be reported as stalled;
 * every answer is rendered from wrk_metrics.c under its lock, nothing here touches Kafka or
 * the sandboxes. Off unless --http ADDR:PORT. */
#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "wrk_metrics.h"

static struct MHD_Daemon *daemon_;

static enum MHD_Result answer(struct MHD_Connection *conn, unsigned status, const char *type,
                              char *body, size_t len)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
    if (!r) {
        free(body);
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    enum MHD_Result rc = MHD_queue_response(conn, status, r);
    MHD_destroy_response(r);
    return rc;
}

static enum MHD_Result probe(struct MHD_Connection *conn, bool (*check)(char *, size_t))
{
    char why[512];
    bool ok = check(why, sizeof why);
    char *body;
    int n = asprintf(&body, "%s\n", why);
    if (n < 0) return MHD_NO;
    return answer(conn, ok ? MHD_HTTP_OK : MHD_HTTP_SERVICE_UNAVAILABLE,
                  "text/plain; charset=utf-8", body, (size_t)n);
}

static enum MHD_Result metrics(struct MHD_Connection *conn)
{
    char *body = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&body, &len);
    if (!f) return MHD_NO;
    wrk_metrics_write(f);
    if (fclose(f) != 0) {
        free(body);
        return MHD_NO;
    }
    return answer(conn, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8", body, len);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version,
                                  const char *upload_data, size_t *upload_size, void **state)
{
    (void)cls, (void)version, (void)upload_data, (void)upload_size, (void)state;
    if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
        return answer(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain", strdup("GET only\n"), 9);
    if (strcmp(url, "/metrics") == 0) return metrics(conn);
    if (strcmp(url, "/healthz") == 0) return probe(conn, wrk_metrics_healthy);
    if (strcmp(url, "/readyz") == 0) return probe(conn, wrk_metrics_ready);
    return answer(conn, MHD_HTTP_NOT_FOUND, "text/plain",
                  strdup("not found: /metrics, /healthz, /readyz\n"), 39);
}

/* "127.0.0.1:9100", "0.0.0.0:9100", "[::]:9100": numeric only, no name lookups. */
static int parse_addr(const char *addr, struct sockaddr_storage *ss, char *err, size_t errlen)
{
    char host[128];
    const char *colon = strrchr(addr, ':');
    size_t hl = colon ? (size_t)(colon - addr) : 0;
    if (hl && addr[0] == '[' && addr[hl - 1] == ']') {
        addr++;
        hl -= 2;
    }
    if (!colon || !hl || hl >= sizeof host || !colon[1]) {
        snprintf(err, errlen, "codeq: config: http=%s: not ADDR:PORT", addr);
        return -1;
    }
    memcpy(host, addr, hl);
    host[hl] = '\0';
    /* getaddrinfo takes any number as a service and wraps it (99999 listened on 34463), and
     * port 0 would listen where nobody knows to scrape */
    char *end;
    unsigned long port = strtoul(colon + 1, &end, 10);
    if (*end || colon[1] < '0' || colon[1] > '9' || port < 1 || port > 65535) {
        snprintf(err, errlen, "codeq: config: http=%s: the port must be 1-65535", addr);
        return -1;
    }
    struct addrinfo hints = {.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE,
                             .ai_socktype = SOCK_STREAM}, *res;
    int rc = getaddrinfo(host, colon + 1, &hints, &res);
    if (rc) {
        snprintf(err, errlen, "codeq: config: http=%s: %s", addr, gai_strerror(rc));
        return -1;
    }
    memcpy(ss, res->ai_addr, res->ai_addrlen);
    freeaddrinfo(res);
    return 0;
}

int wrk_http_check(const char *addr, char *err, size_t errlen)
{
    struct sockaddr_storage ss;
    return parse_addr(addr, &ss, err, errlen);
}

/* libmicrohttpd's own complaints (a client that broke off, accept failing) go to the log. */
static void mhd_log(void *cls, const char *fmt, va_list ap)
{
    (void)cls;
    wrk_logv(WRK_LOG_WARN, "http_error", NULL, fmt, ap);
}

/* The listening socket, made here so that a failure is named with its errno: given the
 * address, libmicrohttpd said "Failed to bind to port 0" for a port in use. Its own defaults
 * kept: SO_REUSEADDR, IPv6 only on an IPv6 address. */
static int listen_on(const struct sockaddr_storage *ss, const char *addr, char *err,
                     size_t errlen)
{
    int one = 1;
    socklen_t len = ss->ss_family == AF_INET6 ? sizeof(struct sockaddr_in6)
                                              : sizeof(struct sockaddr_in);
    int fd = socket(ss->ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd >= 0 && (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0 ||
                    (ss->ss_family == AF_INET6 &&
                     setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one) < 0) ||
                    bind(fd, (const struct sockaddr *)ss, len) < 0 || listen(fd, 64) < 0)) {
        int e = errno;
        close(fd);
        fd = -1;
        errno = e;
    }
    if (fd < 0)
        snprintf(err, errlen, "codeq: worker: http: listen on %s: %s", addr, strerror(errno));
    return fd;
}

int wrk_http_start(const char *addr, char *err, size_t errlen)
{
    struct sockaddr_storage ss = {0};
    if (!addr) return 0;
    if (parse_addr(addr, &ss, err, errlen) < 0) return -1;
    int fd = listen_on(&ss, addr, err, errlen);
    if (fd < 0) return -1;
    /* epoll: select() would refuse connections on descriptors above 1023, and a worker
     * with many slots holds many descriptors */
    unsigned flags = MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_ERROR_LOG;
    if (ss.ss_family == AF_INET6) flags |= MHD_USE_IPv6;
    /* The logger first: libmicrohttpd warns about any option before it. */
    daemon_ = MHD_start_daemon(flags, 0, NULL, NULL, on_request, NULL,
                               MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL,
                               MHD_OPTION_LISTEN_SOCKET, fd,
                               MHD_OPTION_CONNECTION_LIMIT, (unsigned)32,
                               MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)10, MHD_OPTION_END);
    if (!daemon_) { /* its reason is logged (http_error); the socket is left as is: some of
                     * libmicrohttpd's failures close it, others do not */
        snprintf(err, errlen, "codeq: worker: http: the server on %s did not start", addr);
        return -1;
    }
    return 0;
}

void wrk_http_stop(void)
{
    if (daemon_) MHD_stop_daemon(daemon_);
    daemon_ = NULL;
}
