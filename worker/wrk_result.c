/* Publish-side shapes: the result message and the audit events, as schemas/ describe them.
 * Builders only; they never talk to Kafka, so `codeq run --json` prints exactly what the worker
 * publishes. Output bytes that are not UTF-8 are carried twice: as text with U+FFFD in place of
 * bad bytes (readable) and as base64 (exact). */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "wrk_internal.h"

/* Process-wide like the worker id: a weaker sandbox profile must show in every message. */
static const char *wrk_profile = "full";

void wrk_result_profile(const char *name)
{
    wrk_profile = name;
}

json_t *wrk_result_new(const char *id, const char *status, const char *worker_id,
                       const char *received_at, json_t *metadata)
{
    char now[32];
    wrk_now_iso(now);
    json_t *r = json_pack("{s:s, s:s, s:s, s:n, s:n, s:s, s:s, s:b, s:b, s:i, s:i, s:n, s:n, s:[],"
                     " s:s, s:n, s:s, s:n, s:s, s:O?}",
                     "id", id, "status", status, "message", "", "exit_code", "signal",
                     "stdout", "", "stderr", "", "stdout_truncated", 0, "stderr_truncated", 0,
                     "stdout_bytes", 0, "stderr_bytes", 0, "usage", "limits", "findings",
                     "worker", worker_id, "code_sha256", "received_at", received_at,
                     "started_at", "finished_at", now, "metadata", metadata);
    json_object_set_new(r, "sandbox_profile", json_string(wrk_profile));
    return r;
}

static json_t *limits_json(const sbx_limits *l)
{
    return json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}",
                     "wall_ms", (json_int_t)l->wall_ms, "cpu_ms", (json_int_t)l->cpu_ms,
                     "memory_mb", (json_int_t)l->memory_mb, "pids", (json_int_t)l->pids,
                     "output_bytes", (json_int_t)l->output_bytes, "file_mb",
                     (json_int_t)l->file_mb, "open_files", (json_int_t)l->open_files,
                     "tmpfs_mb", (json_int_t)l->tmpfs_mb, "artifact_files",
                     (json_int_t)l->artifact_files, "artifact_bytes",
                     (json_int_t)l->artifact_bytes, "io_read_bps", (json_int_t)l->io_read_bps,
                     "io_write_bps", (json_int_t)l->io_write_bps, "io_read_iops",
                     (json_int_t)l->io_read_iops, "io_write_iops",
                     (json_int_t)l->io_write_iops);
}

/* Files the job left in /work: text when UTF-8, base64 otherwise. A name is bytes too: one
 * that is not UTF-8 is carried as text with U+FFFD (readable) and exactly as path_base64, like
 * the content, so no collected file can drop out of the list (issue 11). Should an entry
 * still fail to build, the list says it is incomplete. */
static void set_artifacts(json_t *r, const sbx_result *s)
{
    if (!s->nartifacts && !s->artifacts_truncated)
        return;
    json_t *a = json_array();
    bool incomplete = s->artifacts_truncated;
    for (size_t i = 0; i < s->nartifacts; i++) {
        const sbx_file *f = &s->artifacts[i];
        bool lossy = false, lossy_name = false;
        json_t *e = json_object();
        json_object_set_new(e, "path", wrk_json_bytes(f->path, strlen(f->path), &lossy_name));
        if (lossy_name)
            json_object_set_new(e, "path_base64", wrk_json_base64(f->path, strlen(f->path)));
        json_object_set_new(e, "bytes", json_integer((json_int_t)f->len));
        json_t *text = wrk_json_bytes(f->data, f->len, &lossy);
        if (lossy) {
            json_decref(text);
            json_object_set_new(e, "content_base64", wrk_json_base64(f->data, f->len));
        } else {
            json_object_set_new(e, "content", text);
        }
        if (json_object_size(e) < 3 || json_array_append_new(a, e) < 0)
            incomplete = true;
    }
    json_object_set_new(r, "artifacts", a);
    json_object_set_new(r, "artifacts_truncated", json_boolean(incomplete));
}

static void set_stream(json_t *r, const char *name, const sbx_buf *b)
{
    char key[32];
    bool lossy = false;
    json_object_set_new(r, name, wrk_json_bytes(b->data ? b->data : "", b->len, &lossy));
    if (lossy) {
        snprintf(key, sizeof key, "%s_base64", name);
        json_object_set_new(r, key, wrk_json_base64(b->data, b->len));
    }
    snprintf(key, sizeof key, "%s_truncated", name);
    json_object_set_new(r, key, json_boolean(b->truncated));
    snprintf(key, sizeof key, "%s_bytes", name);
    json_object_set_new(r, key, json_integer((json_int_t)b->total));
}

void wrk_result_set_run(json_t *r, const sbx_result *s, const sbx_limits *lim)
{
    char sig[32];
    char now[32];
    json_object_set_new(r, "status", json_string(sbx_status_name(s->status)));
    json_object_set_new(r, "message", wrk_json_text(s->message));
    json_object_set_new(r, "exit_code", s->exit_code >= 0 ? json_integer(s->exit_code)
                                                          : json_null());
    if (s->signal > 0) {
        const char *abbrev = sigabbrev_np(s->signal);
        snprintf(sig, sizeof sig, "SIG%s", abbrev ? abbrev : "UNKNOWN");
        json_object_set_new(r, "signal", json_string(sig));
    }
    set_stream(r, "stdout", &s->out);
    set_stream(r, "stderr", &s->err);
    json_object_set_new(r, "usage",
                        json_pack("{s:I, s:I, s:I}", "wall_ms", (json_int_t)s->wall_ms,
                                  "cpu_ms", (json_int_t)s->cpu_ms, "max_rss_kb",
                                  (json_int_t)s->max_rss_kb));
    json_object_set_new(r, "limits", limits_json(lim));
    set_artifacts(r, s);
    if (s->profile)
        json_object_set_new(r, "sandbox_profile", json_string(s->profile));
    wrk_now_iso(now);
    json_object_set_new(r, "finished_at", json_string(now));
}

json_t *wrk_findings_json(const val_report *rep, size_t max)
{
    json_t *a = json_array();
    for (size_t i = 0; rep && i < rep->count && (max == 0 || i < max); i++) {
        const val_finding *f = &rep->items[i];
        json_array_append_new(a, json_pack("{s:s, s:s, s:s, s:i, s:i, s:i, s:i}", "rule",
                                           f->rule, "severity", f->severity, "message",
                                           f->message, "line", f->line, "col", f->col,
                                           "end_line", f->end_line, "end_col", f->end_col));
    }
    return a;
}

json_t *wrk_audit_event(const char *event, const char *job_id, const char *worker_id,
                        const char *sha256, const wrk_source *src)
{
    char now[32];
    wrk_now_iso(now);
    json_t *e = json_pack("{s:s, s:s?, s:s, s:s, s:s?}", "event", event, "job_id", job_id,
                          "worker", worker_id, "time", now, "code_sha256",
                          sha256 && sha256[0] ? sha256 : NULL);
    if (src && src->topic)
        json_object_set_new(e, "source",
                            json_pack("{s:s, s:i, s:I}", "topic", src->topic, "partition",
                                      src->partition, "offset", (json_int_t)src->offset));
    else
        json_object_set_new(e, "source", json_null());
    json_object_set_new(e, "sandbox_profile", json_string(wrk_profile));
    return e;
}
