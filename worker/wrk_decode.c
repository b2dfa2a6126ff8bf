/* Decode: turn a job record into a wrk_job, or say precisely why not.
 * The job format is strict (unknown fields are refused) because a misspelt "limits" silently
 * ignored would run a job with limits its author did not ask for. The id is read first, so
 * that every later failure can still be answered with an `invalid` result keyed by it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wrk_internal.h"

#define JOB_MAX_ID 256
#define JOB_MAX_METADATA (16 * 1024)
/* Echoed in the result: clients parse it, and Python's json gives up near 1000 levels (the
 * job's own limit, 2048 in jansson, is the parser's, not a reader's). */
#define JOB_MAX_METADATA_DEPTH 64
#define JOB_MAX_REREADS 8

/* Whether arrays and objects nest more than max levels in j (recursion bounded by max). */
static bool nested_deeper(json_t *j, int max)
{
    if (!json_is_array(j) && !json_is_object(j)) return false;
    if (max == 0) return true;
    size_t i;
    const char *k;
    json_t *v;
    if (json_is_array(j)) {
        json_array_foreach(j, i, v) if (nested_deeper(v, max - 1)) return true;
    } else {
        json_object_foreach(j, k, v) if (nested_deeper(v, max - 1)) return true;
    }
    return false;
}

static const char *const job_fields[] = {"id",       "code",     "stdin",    "limits",
                                         "reply_to", "metadata", "deadline", "files",
                                         NULL};

typedef struct {
    const char *name;
    size_t offset;
} limit_field;

static const limit_field limit_fields[] = {
    {"wall_ms", offsetof(sbx_limits, wall_ms)},
    {"cpu_ms", offsetof(sbx_limits, cpu_ms)},
    {"memory_mb", offsetof(sbx_limits, memory_mb)},
    {"pids", offsetof(sbx_limits, pids)},
    {"output_bytes", offsetof(sbx_limits, output_bytes)},
    {"file_mb", offsetof(sbx_limits, file_mb)},
    {"open_files", offsetof(sbx_limits, open_files)},
    {"tmpfs_mb", offsetof(sbx_limits, tmpfs_mb)},
    {"artifact_files", offsetof(sbx_limits, artifact_files)},
    {"artifact_bytes", offsetof(sbx_limits, artifact_bytes)},
    {"io_read_bps", offsetof(sbx_limits, io_read_bps)},
    {"io_write_bps", offsetof(sbx_limits, io_write_bps)},
    {"io_read_iops", offsetof(sbx_limits, io_read_iops)},
    {"io_write_iops", offsetof(sbx_limits, io_write_iops)},
    {NULL, 0},
};

/* At most JOB_MAX_ID characters, as the schema and the client count them (code points: jansson
 * has checked the UTF-8, so every byte but a continuation byte starts one). */
static bool valid_id(const char *s, size_t len)
{
    size_t chars = 0;
    for (size_t i = 0; i < len; i++) {
        if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f) return false;
        chars += ((unsigned char)s[i] & 0xC0) != 0x80;
    }
    return chars > 0 && chars <= JOB_MAX_ID;
}

bool wrk_topic_name_ok(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > 249 || strcmp(s, ".") == 0 || strcmp(s, "..") == 0) return false;
    for (size_t i = 0; i < n; i++)
        if (!(s[i] == '.' || s[i] == '_' || s[i] == '-' || (s[i] >= '0' && s[i] <= '9') ||
              (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z')))
            return false;
    return true;
}

/* A name cut short at its NUL would be another name. */
const char *wrk_json_name(const json_t *v)
{
    const char *s = json_string_value(v);
    return s && strlen(s) == json_string_length(v) ? s : NULL;
}

static int fail(char *why, size_t whylen, const char *fmt, const char *arg)
{
    snprintf(why, whylen, fmt, arg);
    return -1;
}

/* fail() quoting a name the job chose: its control characters shown escaped. */
static int fail_name(char *why, size_t whylen, const char *fmt, const char *name)
{
    char esc[256];
    wrk_escape(name, strlen(name), false, esc, sizeof esc);
    return fail(why, whylen, fmt, esc);
}

/* The field of l named `name`, or NULL. Shared with the operator's --limit-* flags. */
uint32_t *wrk_limit_field(sbx_limits *l, const char *name)
{
    for (const limit_field *f = limit_fields; f->name; f++)
        if (!strcmp(f->name, name)) return (uint32_t *)((char *)l + f->offset);
    return NULL;
}

const char *wrk_limit_name(size_t i)
{
    size_t n = 0;
    while (limit_fields[n].name) n++;
    return i < n ? limit_fields[i].name : NULL;
}

/* A limit's value: 0, or -1 when it is not a positive integer, 1 when it is one too large to
 * be any limit (sbx_limits_check says the same of one above the operator's maximum). JSON
 * Schema's integer is any number without a fraction, so 2500.0 (as Python writes timeout *
 * 1000) and 1e3 are integers too, as schemas/ validates them. */
static int limit_value(const json_t *v, uint32_t *out)
{
    if (json_is_integer(v)) {
        json_int_t i = json_integer_value(v);
        if (i < 1) return -1;
        if (i > UINT32_MAX) return 1;
        *out = (uint32_t)i;
        return 0;
    }
    double d = json_is_real(v) ? json_real_value(v) : 0;
    if (!(d >= 1)) return -1;
    /* From 2^53 on every double is whole; below, the cast to 64 bits is defined. */
    if (d < 9007199254740992.0 && d != (double)(int64_t)d) return -1;
    if (d > UINT32_MAX) return 1;
    *out = (uint32_t)d;
    return 0;
}

static int decode_limits(json_t *lim, const wrk_config *c, sbx_limits *out, char *why,
                         size_t whylen)
{
    *out = c->defaults;
    if (!lim) return 0;
    if (!json_is_object(lim)) return fail(why, whylen, "%s", "limits must be an object");
    const char *key;
    json_t *v;
    json_object_foreach(lim, key, v) {
        uint32_t *field = wrk_limit_field(out, key);
        if (!field) return fail_name(why, whylen, "unknown limit '%s'", key);
        int rc = limit_value(v, field);
        if (rc < 0) return fail(why, whylen, "limits.%s must be a positive integer", key);
        if (rc > 0) {
            sbx_limits max = c->max;
            snprintf(why, whylen, "limits.%s above maximum %u", key, *wrk_limit_field(&max, key));
            return -1;
        }
    }
    return sbx_limits_check(out, &c->max, why, whylen);
}

/* Checked early and set only once allowed: an invalid job is answered on its reply_to too, so
 * a client reading only its own topic hears about every job it sent. */
static int decode_reply_to(json_t *rt, const wrk_config *c, wrk_job *job, char *why,
                           size_t whylen)
{
    if (!rt) return 0;
    const char *to = wrk_json_name(rt);
    if (!to || !wrk_topic_name_ok(to))
        return fail(why, whylen, "%s", "reply_to must be a Kafka topic name");
    const wrk_kafka_opts *k = &c->kafka;
    if (!strcmp(to, k->jobs_topic) || !strcmp(to, k->audit_topic) || !strcmp(to, k->dlq_topic))
        return fail(why, whylen, "reply_to may not name codeq's own topic '%s'", to);
    /* Kafka's own (__consumer_offsets, __transaction_state, ...): a transaction cannot take
     * them, and a job naming one would abort every transaction of its worker, forever. */
    if (!strncmp(to, "__", 2))
        return fail(why, whylen, "reply_to may not name a Kafka internal topic '%s'", to);
    /* Whoever can write a job must not make the worker, with its credentials, write into
     * another service's topic: only the results topic and the operator's prefix. */
    const char *pre = c->reply_prefix ? c->reply_prefix : "";
    if (strcmp(to, k->results_topic) && strncmp(to, pre, strlen(pre))) {
        snprintf(why, whylen, "reply_to '%s' is not allowed: this worker answers on %s or on "
                 "topics starting with '%s' (--reply-topic-prefix)", to, k->results_topic, pre);
        return -1;
    }
    job->reply_to = to;
    return 0;
}

/* Kept only when it may be echoed: an invalid job's result carries it too. */
static int decode_metadata(json_t *md, wrk_job *job, char *why, size_t whylen)
{
    if (!md) return 0;
    char *s = json_dumps(md, JSON_COMPACT | JSON_ENCODE_ANY);
    size_t n = s ? strlen(s) : 0;
    free(s);
    if (n > JOB_MAX_METADATA)
        return fail(why, whylen, "metadata is larger than %s bytes once encoded", "16384");
    if (nested_deeper(md, JOB_MAX_METADATA_DEPTH))
        return fail(why, whylen, "metadata is nested deeper than %s levels", "64");
    job->metadata = md;
    return 0;
}

static int decode_fields(json_t *root, const wrk_config *c, wrk_job *job, char *why,
                         size_t whylen)
{
    /* metadata and reply_to, each taken if it is good, before anything else can fail: an
     * invalid job is still answered on its reply_to, with its metadata. */
    char md_why[128];
    int md = decode_metadata(json_object_get(root, "metadata"), job, md_why, sizeof md_why);
    if (decode_reply_to(json_object_get(root, "reply_to"), c, job, why, whylen) < 0) return -1;
    if (md < 0) return fail(why, whylen, "%s", md_why);
    const char *key;
    json_t *v;
    json_object_foreach(root, key, v) {
        const char *const *f = job_fields;
        while (*f && strcmp(*f, key) != 0) f++;
        if (!*f) return fail_name(why, whylen, "unknown field '%s'", key);
    }
    json_t *code = json_object_get(root, "code");
    if (!code) return fail(why, whylen, "%s", "code is required: the program, a string");
    if (!json_is_string(code)) return fail(why, whylen, "%s", "code must be a string");
    job->code = json_string_value(code);
    job->code_len = json_string_length(code);
    if (job->code_len > WRK_JOB_MAX_CODE)
        return fail(why, whylen, "code is larger than %s bytes", "262144");
    if (memchr(job->code, '\0', job->code_len))
        return fail(why, whylen, "%s", "code contains a NUL character (\\u0000), which Python "
                    "source cannot");

    json_t *in = json_object_get(root, "stdin");
    if (in && !json_is_string(in)) return fail(why, whylen, "%s", "stdin must be a string");
    if (in) {
        job->stdin_data = json_string_value(in);
        job->stdin_len = json_string_length(in);
        if (job->stdin_len > WRK_JOB_MAX_STDIN)
            return fail(why, whylen, "stdin is larger than %s bytes", "1048576");
    }
    json_t *dl = json_object_get(root, "deadline");
    const char *when = wrk_json_name(dl);
    if (dl && (!when || !wrk_parse_time_ms(when, &job->deadline_ms)))
        return fail(why, whylen, "%s", "deadline must be an RFC 3339 time with its offset, "
                    "like 2026-11-30T05:45:29.000Z or 2026-11-30T06:45:29+01:00");
    if (dl && job->deadline_ms == 0) job->deadline_ms = -1; /* the epoch itself: 0 says none */
    if (decode_limits(json_object_get(root, "limits"), c, &job->limits, why, whylen) < 0)
        return -1;
    size_t guard_len = 0;
    wrk_config_guard(c, &guard_len);
    return wrk_files_decode(json_object_get(root, "files"), job, guard_len, why, whylen);
}

/* Blank the number ending at end (jansson reports an overflow there) to "0" and spaces: the
 * text keeps its length, so lines and columns stay. */
static bool blank_number(char *t, size_t end)
{
    size_t at = end;
    while (at > 0 && t[at - 1] && strchr("0123456789eE+-.", t[at - 1])) at--;
    if (at == end) return false;
    t[at] = '0';
    memset(t + at + 1, ' ', end - at - 1);
    return true;
}

/* jansson counts every value's depth, the top one's 1, and refuses one deeper than this. */
#define JSON_MAX_DEPTH 2048

/* Blank every array or object at jansson's last depth through its closing bracket, to "0" and
 * spaces: none of its values is then too deep. Strings are skipped whole: a bracket in one is
 * text. False when none was blanked or one has no end (not JSON: the re-read says so). */
static bool blank_deepest(char *t, size_t len)
{
    size_t depth = 0, from = 0;
    bool blanked = false;
    for (size_t i = 0; i < len; i++) {
        if (t[i] == '"') {
            for (i++; i < len && t[i] != '"'; i++)
                if (t[i] == '\\') i++;
        } else if (t[i] == '[' || t[i] == '{') {
            if (++depth == JSON_MAX_DEPTH) from = i;
        } else if ((t[i] == ']' || t[i] == '}') && depth > 0) {
            if (depth-- == JSON_MAX_DEPTH) {
                t[from] = '0';
                memset(t + from + 1, ' ', i - from);
                blanked = true;
            }
        }
    }
    return blanked && depth < JSON_MAX_DEPTH;
}

/* Valid JSON the strict read refused, read once more for its id only, over a copy of the text:
 * a key given twice counts its last value (as Python's, JavaScript's and Go's parsers read
 * it); a number too large for a double (1e309) and the arrays and objects whose values would
 * be nested beyond jansson's 2048 levels are written as 0 (same length: lines and columns
 * stay); integers too large for 64 bits are read as doubles. jansson reports one overflow at a
 * time, so each costs a parse of the whole record: at most JOB_MAX_REREADS; NULL beyond (the
 * record is dead-lettered), for any other error, or without memory. */
static json_t *reread_for_id(const char *buf, size_t len, size_t flags)
{
    char *copy = malloc(len ? len : 1);
    json_t *root = NULL;
    if (!copy) return NULL;
    memcpy(copy, buf, len);
    flags = (flags & ~(size_t)JSON_REJECT_DUPLICATES) | JSON_DECODE_INT_AS_REAL;
    for (int i = 0; i <= JOB_MAX_REREADS && !root; i++) {
        json_error_t e;
        root = json_loadb(copy, len, flags, &e);
        size_t at = e.position > 0 ? (size_t)e.position : 0;
        if (root) break;
        if (json_error_code(&e) == json_error_numeric_overflow && at <= len &&
            blank_number(copy, at))
            continue;
        if (json_error_code(&e) != json_error_stack_overflow || !blank_deepest(copy, len))
            break;
    }
    free(copy);
    return root;
}

/* Valid JSON that jansson's strict read refuses, with the words the job's answer gives. */
static const char *reread_reason(enum json_error_code code)
{
    switch (code) {
    case json_error_numeric_overflow: return "a number in the job does not fit in 64 bits";
    case json_error_duplicate_key: return "an object in the job has a key twice";
    case json_error_stack_overflow:
        return "the job nests arrays and objects deeper than 2048 levels";
    default: return NULL;
    }
}

/* How far back from jansson's error a key given twice is looked for, and how much of it the
 * reason shows. */
#define DUP_KEY_SCAN 65536
#define DUP_KEY_SHOW 80

/* The key a strict read found twice, as its sender wrote it, quoted and escaped into out:
 * jansson names it only up to 20 characters, but stops just past its closing quote. Inside the
 * key every quote is escaped (an odd run of backslashes before it); its opening quote follows
 * '{', ',' or blanks. So the key starts at the first quote back with an even run (none) before
 * it, and one parse confirms it. False when not found within DUP_KEY_SCAN bytes. */
static bool duplicate_key(const char *buf, size_t len, size_t end, char *out, size_t outn)
{
    if (end < 2 || end > len || buf[end - 1] != '"') return false;
    size_t from = end > DUP_KEY_SCAN ? end - DUP_KEY_SCAN : 0, at = end;
    for (size_t i = end - 1; i-- > from && at == end;) {
        if (buf[i] != '"') continue;
        size_t run = 0;
        while (run < i && buf[i - 1 - run] == '\\') run++;
        if (run % 2 == 0) at = i;
    }
    json_t *k = at < end ? json_loadb(buf + at, end - at, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL)
                         : NULL;
    bool ok = json_is_string(k);
    json_decref(k);
    if (!ok) return false;
    size_t n = end - at, shown = n > DUP_KEY_SHOW ? DUP_KEY_SHOW : n;
    while (shown < n && ((unsigned char)buf[at + shown] & 0xc0) == 0x80) shown--; /* whole UTF-8 */
    size_t k0 = (size_t)snprintf(out, outn, "'");
    wrk_escape(buf + at, shown, false, out + k0, outn - k0);
    k0 += strlen(out + k0);
    snprintf(out + k0, outn - k0, "%s'", shown < n ? "..." : "");
    return true;
}

/* Why a record is not JSON, in words its sender can act on. jansson reads a NUL byte as the
 * end of the text ("end of file expected near end of file"), and quotes the text near its
 * error as it is: the record's own control characters are shown escaped, since the reason goes
 * to the log, the dead letter's codeq.error and the audit trail. */
static void not_json(const char *buf, size_t len, const json_error_t *e, char *why, size_t whylen)
{
    const char *nul = memchr(buf, '\0', len);
    if (nul && e->position < nul - buf) nul = NULL; /* jansson failed before it */
    char text[sizeof e->text * 2];
    wrk_escape(e->text, strlen(e->text), false, text, sizeof text);
    if (nul)
        snprintf(why, whylen, "job is not valid JSON: it holds a NUL byte (at byte %zu; "
                 "a NUL in a string is written \\u0000)", (size_t)(nul - buf));
    else
        snprintf(why, whylen, "job is not valid JSON: %s (line %d, column %d)", text, e->line,
                 e->column);
}

int wrk_job_decode(const char *buf, size_t len, const wrk_config *c, wrk_job *job, char *why,
                   size_t whylen)
{
    json_error_t jerr;
    memset(job, 0, sizeof *job);
    /* \u0000 is valid JSON and a job may carry it: stdin and input files are bytes. Without
     * JSON_ALLOW_NUL such a job could not even be answered (no id), only dead-lettered; names
     * are checked for it where they are read (wrk_json_name), code just below. */
    const size_t flags = JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL | JSON_DECODE_ANY;
    if (len == 0)
        return fail(why, whylen, "%s", "job is empty: the record has no value");
    json_t *root = json_loadb(buf, len, flags, &jerr);
    const char *reread = root ? NULL : reread_reason(json_error_code(&jerr));
    if (reread) /* valid JSON all the same: read it once more for its id, to answer it */
        root = reread_for_id(buf, len, flags);
    if (!root) {
        not_json(buf, len, &jerr, why, whylen);
        return -1;
    }
    if (!json_is_object(root)) {
        json_decref(root);
        return fail(why, whylen, "%s", "job must be a JSON object");
    }
    json_t *id = json_object_get(root, "id");
    if (!json_is_string(id) || !valid_id(json_string_value(id), json_string_length(id))) {
        json_decref(root);
        return fail(why, whylen, "%s",
                    "job id must be a string of 1-256 characters without control characters");
    }
    job->root = root;
    job->id = json_string_value(id);
    /* Before any other check: a job refused for another field (unknown, its reply_to, a key
     * twice) still names the code it carried, in its answer and its audit events. */
    json_t *code = json_object_get(root, "code");
    if (json_is_string(code))
        wrk_sha256_hex(json_string_value(code), json_string_length(code), job->code_sha256);
    if (reread) {
        /* Answered on its reply_to all the same (a string the re-read left as it was); its
         * metadata may be where the re-read changed the text, so it is not echoed. */
        if (decode_reply_to(json_object_get(root, "reply_to"), c, job, why, whylen) < 0)
            return -1;
        /* the sender needs to know which key it gave twice */
        char key[DUP_KEY_SHOW * 4 + 8] = "";
        bool named = json_error_code(&jerr) == json_error_duplicate_key && jerr.position > 0 &&
                     duplicate_key(buf, len, (size_t)jerr.position, key, sizeof key);
        snprintf(why, whylen, "%s%s%s (line %d, column %d)", reread, named ? ": " : "", key,
                 jerr.line, jerr.column);
        return -1;
    }
    /* On failure root stays with the job: the caller answers `invalid` with id and metadata. */
    return decode_fields(root, c, job, why, whylen);
}

void wrk_job_free(wrk_job *job)
{
    wrk_files_free(job);
    json_decref(job->root);
    memset(job, 0, sizeof *job);
}
