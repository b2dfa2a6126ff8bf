/* The worker's one log sink. `codeq worker` writes one JSON object per line on stderr (what
 * log shippers and `jq` expect): {"time","level","event","message"} plus job_id, topic,
 * partition and offset where the call site knows them; --log-format text keeps the line
 * people read ("<time> codeq: <message>"), which is also what every other subcommand writes.
 * The message text is the same in both formats, so a grep for it works on either.
 * librdkafka logs from its own threads: each line is built whole, then written under the
 * stdio lock, so lines never interleave. In JSON mode librdkafka's logs come here too. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wrk_internal.h"

static bool log_json;
static wrk_log_level log_min = WRK_LOG_INFO;
static const char *const level_names[] = {"debug", "info", "warn", "error"};

static bool log_set_up;

bool wrk_log_owns_kafka(void)
{
    return log_set_up;
}

int wrk_log_setup(const char *format, const char *level, char *err, size_t errlen)
{
    if (format && strcmp(format, "json") != 0 && strcmp(format, "text") != 0) {
        snprintf(err, errlen, "codeq: config: log-format=%s: json or text", format);
        return -1;
    }
    if (format) log_json = strcmp(format, "json") == 0;
    log_set_up = true;
    if (!level) return 0;
    for (int i = 0; i < 4; i++)
        if (strcmp(level, level_names[i]) == 0) {
            log_min = (wrk_log_level)i;
            return 0;
        }
    snprintf(err, errlen, "codeq: config: log-level=%s: debug, info, warn or error", level);
    return -1;
}

static void emit(const char *line)
{
    flockfile(stderr);
    fputs(line, stderr);
    fputc('\n', stderr);
    funlockfile(stderr);
}

static void emit_json(wrk_log_level level, const char *event, const wrk_log_ctx *ctx,
                      const char *ts, const char *msg)
{
    bool lossy;
    json_t *o = json_object();
    json_object_set_new(o, "time", json_string(ts));
    json_object_set_new(o, "level", json_string(level_names[level]));
    json_object_set_new(o, "event", json_string(event));
    json_object_set_new(o, "message", wrk_json_bytes(msg, strlen(msg), &lossy));
    if (ctx && ctx->job_id)
        json_object_set_new(o, "job_id", wrk_json_bytes(ctx->job_id, strlen(ctx->job_id), &lossy));
    if (ctx && ctx->topic) {
        json_object_set_new(o, "topic", json_string(ctx->topic));
        json_object_set_new(o, "partition", json_integer(ctx->partition));
        if (ctx->offset >= 0) json_object_set_new(o, "offset", json_integer(ctx->offset));
    }
    /* ASCII only: a job id or a message may hold C1 controls (U+009B is CSI to some
     * terminals) or U+2028, which jansson writes as they are otherwise. */
    char *line = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENSURE_ASCII);
    json_decref(o);
    if (line) emit(line);
    else emit("{\"level\":\"error\",\"event\":\"log\",\"message\":\"codeq: log: out of memory\"}");
    free(line);
}

void wrk_logv(wrk_log_level level, const char *event, const wrk_log_ctx *ctx, const char *fmt,
              va_list ap)
{
    char ts[32], msg[2048];
    if (level < log_min) return;
    wrk_now_iso(ts);
    vsnprintf(msg, sizeof msg, fmt, ap);
    for (size_t n = strlen(msg); n && msg[n - 1] == '\n'; n--) msg[n - 1] = '\0';
    if (log_json) {
        emit_json(level, event, ctx, ts, msg);
        return;
    }
    /* A message can quote what a record or a job holds (an id, a parse error): its control
     * characters are shown, not written to the terminal or file that reads the log. */
    char esc[sizeof msg * 4], line[sizeof esc + 64]; /* \xNN: four bytes for one */
    wrk_escape(msg, strlen(msg), false, esc, sizeof esc);
    /* errors built elsewhere already start with "codeq: " */
    snprintf(line, sizeof line, "%s %s%s", ts, strncmp(esc, "codeq: ", 7) ? "codeq: " : "", esc);
    emit(line);
}

void wrk_logx(wrk_log_level level, const char *event, const wrk_log_ctx *ctx, const char *fmt,
              ...)
{
    va_list ap;
    va_start(ap, fmt);
    wrk_logv(level, event, ctx, fmt, ap);
    va_end(ap);
}

void wrk_log(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    wrk_logv(WRK_LOG_INFO, "log", NULL, fmt, ap);
    va_end(ap);
}

/* librdkafka's log callback: syslog levels, 0 emerg .. 7 debug. */
void wrk_log_kafka(const rd_kafka_t *rk, int level, const char *fac, const char *buf)
{
    wrk_log_level l = level <= 3 ? WRK_LOG_ERROR : level == 4 ? WRK_LOG_WARN
                      : level <= 6 ? WRK_LOG_INFO : WRK_LOG_DEBUG;
    wrk_logx(l, "kafka_log", NULL, "kafka: %s: %s: %s", rd_kafka_name(rk), fac, buf);
}
