/* Stop: SIGTERM/SIGINT ask the worker to stop, and every stop has a bound. The process ends
 * within grace + STOP_SLACK_MS of the signal (or STOP_SLACK_MS after the worker's own end
 * began: a fatal error, a host fault), whatever a step of the stop waits on: a transactional
 * call or the consumer's close with the broker away, an init_transactions still retrying at
 * start-up, a producer's destroy. Past the bound it leaves as a crash would (exit 3, or the
 * own end's code): what it had not committed runs again at the partitions' next owner, its
 * jobs die with it (PR_SET_PDEATHSIG), and the next start sweeps their cgroups and staging
 * directories.
 * The bound is kept by a thread started with the handlers; a signal wakes it through a
 * semaphore, the one wake-up a handler may do. */
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "wrk_worker.h"

#define STOP_SLACK_MS 25000 /* beyond the grace period: the final commit, the close */

static atomic_int stop_requested;   /* lock-free atomics may be used in a handler */
static _Atomic uint64_t stop_at_ms; /* monotonic: the first signal's, or a graced own end's */
static atomic_int exit_code = 3;    /* past the bound: a crash, or the own end's own code */
static sem_t wake;
static struct { /* copies: the watch may outlive the caller's configuration */
    int grace_ms;
    char worker_id[256], heartbeat_path[4096];
} cfg;
static _Atomic(const char *) step = "the start-up";
static char wedge[128]; /* CODEQ_TEST_STOP_WEDGE, a test hook: the step so named never ends */

static void on_stop(int sig)
{
    (void)sig;
    uint64_t none = 0;
    atomic_compare_exchange_strong(&stop_at_ms, &none, wrk_now_ms()); /* clock_gettime: safe here */
    atomic_store(&stop_requested, 1);
    sem_post(&wake);
}

static void on_alarm(int sig)
{
    (void)sig;
    _exit(atomic_load(&exit_code));
}

static void sleep_until(uint64_t ms)
{
    struct timespec t = {.tv_sec = (time_t)(ms / 1000), .tv_nsec = (long)(ms % 1000) * 1000000L};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL) == EINTR) {
    }
}

static void *watch(void *arg)
{
    (void)arg;
    while (sem_wait(&wake) < 0 && errno == EINTR) {
    }
    /* The first wake decides: a signal gives the grace period, the worker's own end does not. */
    uint64_t grace_end = wrk_stop_grace_end();
    int bound_ms = (grace_end ? cfg.grace_ms : 0) + STOP_SLACK_MS;
    sleep_until((grace_end ? grace_end : wrk_now_ms()) + STOP_SLACK_MS);
    /* A stopped worker is not alive: the probe must not say it is. */
    if (cfg.heartbeat_path[0]) unlink(cfg.heartbeat_path);
    /* The log line must not keep the process alive: stderr's lock held by a stuck thread, or
     * a write to a full pipe nobody reads, would. The alarm ends it then. */
    struct sigaction sa = {.sa_handler = on_alarm};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, NULL);
    alarm(2);
    wrk_logx(WRK_LOG_ERROR, "stop_timeout", NULL,
             "worker %s: the stop did not end within %d ms (waiting on %s; broker away?): "
             "leaving now; what was not committed runs again at the partitions' next owner",
             cfg.worker_id, bound_ms, atomic_load(&step));
    _exit(atomic_load(&exit_code));
    return NULL;
}

int wrk_stop_install(const wrk_config *c, char *err, size_t errlen)
{
    const char *hook = getenv("CODEQ_TEST_STOP_WEDGE");
    snprintf(wedge, sizeof wedge, "%s", hook ? hook : "");
    cfg.grace_ms = c->grace_ms;
    snprintf(cfg.worker_id, sizeof cfg.worker_id, "%s", c->worker_id);
    snprintf(cfg.heartbeat_path, sizeof cfg.heartbeat_path, "%s",
             c->heartbeat_path ? c->heartbeat_path : "");
    if (sem_init(&wake, 0, 0) < 0) {
        snprintf(err, errlen, "codeq: worker: stop semaphore: %s", strerror(errno));
        return -1;
    }
    /* Blocked in the new thread, so that the signals are delivered to the others. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    pthread_t t;
    int e = pthread_create(&t, NULL, watch, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (e) {
        snprintf(err, errlen, "codeq: worker: stop watch thread: %s", strerror(e));
        return -1;
    }
    pthread_detach(t);
    struct sigaction sa = {0};
    sa.sa_handler = on_stop;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    /* A mask inherited across exec must not silence the stop or the watch's alarm. */
    sigset_t ours;
    sigemptyset(&ours);
    sigaddset(&ours, SIGTERM);
    sigaddset(&ours, SIGINT);
    sigaddset(&ours, SIGALRM);
    pthread_sigmask(SIG_UNBLOCK, &ours, NULL);
    return 0;
}

bool wrk_stop_requested(void)
{
    return atomic_load(&stop_requested);
}

uint64_t wrk_stop_grace_end(void)
{
    uint64_t at = atomic_load(&stop_at_ms);
    return at ? at + (uint64_t)cfg.grace_ms : 0;
}

void wrk_stop_begin(bool grace, int rc)
{
    static atomic_int begun;
    if (wrk_stop_requested() || atomic_exchange(&begun, 1)) return; /* the first end decides */
    atomic_store(&exit_code, rc);
    if (grace) atomic_store(&stop_at_ms, wrk_now_ms());
    sem_post(&wake);
}

void wrk_stop_step(const char *what)
{
    atomic_store(&step, what);
    if (!wedge[0] || strcmp(wedge, what) != 0) return;
    wrk_logx(WRK_LOG_WARN, "test_hook", NULL, "worker: CODEQ_TEST_STOP_WEDGE: %s never ends", what);
    for (;;) pause();
}
