/* Fit: a result and an audit event always fit in one Kafka record. A record above the
 * producer's message.max.bytes (or the topic's max.message.bytes) is refused, its transaction
 * aborted, and the worker would retry it forever while no later result is committed. So before
 * a result is published it is measured as encoded and, if too large, shrunk in a fixed order:
 *   1. the largest of stdout, stderr (each exact bytes, re-encoded as text and, when not
 *      UTF-8, base64) is cut to half, its *_truncated flag set (its *_bytes keeps what the
 *      program wrote); artifacts are dropped whole, largest first, artifacts_truncated set;
 *   2. the findings (at most WRK_FINDINGS_MAX where they are made) are cut to the longest
 *      head that fits, at least one, findings_total saying how many there were: a hundred
 *      findings take 13 kB, more than a topic of 8192 bytes takes;
 *   3. if that is not enough (the job's own metadata is too large, say), the result becomes a
 *      short internal_error that names the part that is.
 * An audit event is held to the same budget less the chain the commit stamps on it; what a
 * job can make large in one is its findings (rejected), cut the same way, and its code
 * (received, --audit-code full), left out where it is made (wrk_dispatch.c). The budget is
 * fixed at start-up (wrk_config.result_max_bytes): `codeq run` applies the same one as a
 * worker with librdkafka's defaults, so it prints what a worker would publish. */
#include <stdlib.h>
#include <string.h>

#include "wrk_internal.h"

static size_t encoded_len(const json_t *r)
{
    return json_dumpb(r, NULL, 0, JSON_COMPACT);
}

/* The exact bytes of stream `name` (from its base64 copy when it has one). */
static char *stream_bytes(json_t *r, const char *name, size_t *len)
{
    char key[32];
    snprintf(key, sizeof key, "%s_base64", name);
    json_t *b64 = json_object_get(r, key);
    if (b64) {
        char *out;
        long n = wrk_base64_decode(json_string_value(b64), json_string_length(b64), SIZE_MAX, &out);
        *len = n < 0 ? 0 : (size_t)n;
        return n < 0 ? strdup("") : out;
    }
    /* The text may hold NUL bytes (a job's output is any bytes): copy all of it, not up to
     * the first NUL, since the caller reads *len bytes. */
    json_t *s = json_object_get(r, name);
    *len = json_string_length(s);
    char *out = malloc(*len + 1);
    if (!out) return NULL;
    if (*len) memcpy(out, json_string_value(s), *len);
    out[*len] = '\0';
    return out;
}

static void set_stream_bytes(json_t *r, const char *name, const char *data, size_t len)
{
    char key[32];
    bool lossy = false;
    json_object_set_new(r, name, wrk_json_bytes(data, len, &lossy));
    snprintf(key, sizeof key, "%s_base64", name);
    if (lossy)
        json_object_set_new(r, key, wrk_json_base64(data, len));
    else
        json_object_del(r, key);
    snprintf(key, sizeof key, "%s_truncated", name);
    json_object_set_new(r, key, json_true());
}

/* Halves stream `name` `halvings` times, in one step; false when it is already empty. */
static bool cut_stream(json_t *r, const char *name, unsigned halvings)
{
    size_t len;
    char *data = stream_bytes(r, name, &len);
    if (!data) return false;
    bool cut = len > 0;
    if (cut) set_stream_bytes(r, name, data, halvings >= 64 ? 0 : len >> halvings);
    free(data);
    return cut;
}

/* The bytes stream `name` carries: its text's, or those of its base64 where it has one. */
static size_t stream_raw_len(json_t *r, const char *name)
{
    char key[32];
    snprintf(key, sizeof key, "%s_base64", name);
    json_t *b64 = json_object_get(r, key);
    size_t n = json_string_length(b64);
    if (!b64 || n < 4) return json_string_length(json_object_get(r, name));
    const char *s = json_string_value(b64);
    return n / 4 * 3 - (s[n - 1] == '=') - (s[n - 2] == '=');
}

static size_t artifact_len(const json_t *a)
{
    json_t *c = json_object_get(a, "content");
    return json_string_length(c ? c : json_object_get(a, "content_base64"));
}

/* What jansson writes for a string's bytes, quotes aside: two for \\, \", \b, \f, \n,
 * \r, \t, six for another control character (\u00XX), one for the rest (JSON_COMPACT
 * escapes nothing else). Exact, so a bound from below on the string's part of the record. */
static size_t escaped_len(const json_t *s)
{
    const unsigned char *p = (const unsigned char *)json_string_value(s);
    size_t n = json_string_length(s), w = n;
    for (size_t i = 0; i < n; i++)
        if (p[i] < 0x20)
            w += memchr("\b\f\n\r\t", p[i], 5) ? 1 : 5;
        else if (p[i] == '"' || p[i] == '\\')
            w += 1;
    return w;
}

static size_t artifact_escaped_len(const json_t *a)
{
    json_t *c = json_object_get(a, "content");
    return escaped_len(c ? c : json_object_get(a, "content_base64"));
}

/* Drops the largest artifact; false when there is none. */
static bool drop_artifact(json_t *r)
{
    json_t *arts = json_object_get(r, "artifacts");
    size_t n = json_array_size(arts), at = 0;
    if (n == 0) return false;
    for (size_t i = 1; i < n; i++)
        if (artifact_len(json_array_get(arts, i)) > artifact_len(json_array_get(arts, at)))
            at = i;
    json_array_remove(arts, at);
    json_object_set_new(r, "artifacts_truncated", json_true());
    return true;
}

/* The parts that can be cut, by their strings' lengths: stdout (0), stderr (1), the artifacts
 * together (2). Returns the largest. *sum: the three together, as encoded when `escaped`
 * (a scan of each string), else their lengths. */
static int largest(json_t *r, bool escaped, size_t *sum)
{
    static const char *const keys[] = {"stdout", "stdout_base64", "stderr", "stderr_base64"};
    size_t len[4], i;
    *sum = 0;
    for (i = 0; i < 4; i++) {
        json_t *s = json_object_get(r, keys[i]);
        len[i] = json_string_length(s);
        *sum += escaped ? escaped_len(s) : len[i];
    }
    size_t out = len[0] + len[1], err = len[2] + len[3], arts = 0;
    json_t *a;
    json_array_foreach(json_object_get(r, "artifacts"), i, a) {
        arts += artifact_len(a);
        *sum += escaped ? artifact_escaped_len(a) : artifact_len(a);
    }
    if (arts >= out && arts >= err && arts > 0) return 2;
    return out >= err ? 0 : 1;
}

static bool cut_largest(json_t *r, int which)
{
    return which == 2 ? drop_artifact(r) : cut_stream(r, which ? "stderr" : "stdout", 1);
}

/* The cuts every fitting makes first, made at once: while a part alone is longer than the
 * room it is the largest, so halving the largest halves it (a stream: until
 * its bytes, which its strings are at least, fit the room) or drops it (an artifact) before
 * anything else, in whatever order. Each stream is rebuilt once, not once a round: rounds of
 * rebuilds took 0.3-0.7 s for 16 MiB streams. Returns the number of parts cut. */
static int cut_oversized(json_t *r, size_t room)
{
    static const char *const streams[] = {"stdout", "stderr"};
    int cuts = 0;
    for (size_t i = 0; i < 2; i++) {
        size_t len = stream_raw_len(r, streams[i]);
        unsigned h = 0;
        while (h < 64 && (len >> h) > room) h++;
        if (h && cut_stream(r, streams[i], h)) cuts++;
    }
    json_t *arts = json_object_get(r, "artifacts");
    size_t i = json_array_size(arts);
    while (i-- > 0)
        if (artifact_len(json_array_get(arts, i)) > room) {
            json_array_remove(arts, i);
            json_object_set_new(r, "artifacts_truncated", json_true());
            cuts++;
        }
    return cuts;
}

/* How many findings o's findings stand for: findings_total where it is, else their count. */
static json_int_t findings_count(const json_t *o)
{
    json_t *total = json_object_get(o, "findings_total");
    return total ? json_integer_value(total)
                 : (json_int_t)json_array_size(json_object_get(o, "findings"));
}

/* o, too large, keeps the longest head of its findings with which it encodes in at most max
 * bytes (at least `least` of them), findings_total saying how many there were. The head is a
 * new array: a result and its rejected event hold the same one (json_pack's O), and cutting
 * one must not cut the other. False if it is still too large. */
static bool cut_findings(json_t *o, size_t max, size_t least)
{
    json_t *all = json_object_get(o, "findings");
    size_t n = json_array_size(all), keep;
    if (n == 0) return false;
    bool had_total = json_object_get(o, "findings_total") != NULL;
    json_int_t total = findings_count(o);
    json_t *head = json_array();
    json_incref(all);
    json_object_set_new(o, "findings_total", json_integer(total));
    json_object_set_new(o, "findings", head);
    size_t used = encoded_len(o);
    for (keep = 0; keep < n; keep++) {
        size_t len = json_dumpb(json_array_get(all, keep), NULL, 0, JSON_COMPACT) + (keep > 0);
        if (used + len > max) break;
        used += len;
    }
    if (keep < least) keep = least < n ? least : n;
    for (size_t i = 0; i < keep; i++) json_array_append(head, json_array_get(all, i));
    if (keep == n && !had_total) json_object_del(o, "findings_total"); /* nothing was cut */
    json_decref(all);
    return encoded_len(o) <= max;
}

/* The member of r that encodes to the most bytes, and how many: what keeps it too large. */
static size_t largest_member(json_t *r, const char **name)
{
    const char *key;
    json_t *v;
    size_t most = 0;
    *name = "id";
    json_object_foreach(r, key, v) {
        size_t len = json_dumpb(v, NULL, 0, JSON_COMPACT | JSON_ENCODE_ANY);
        if (len > most) {
            most = len;
            *name = key;
        }
    }
    return most;
}

static void replace_with_error(json_t *r, size_t max)
{
    char msg[300];
    const char *part;
    size_t len = largest_member(r, &part);
    snprintf(msg, sizeof msg, "codeq: worker: the result does not fit in %zu bytes even with its "
             "output, artifacts and findings cut: its largest part, %.40s, takes %zu bytes",
             max, part, len);
    json_object_set_new(r, "status", json_string("internal_error"));
    json_object_set_new(r, "message", wrk_json_text(msg));
    json_object_set_new(r, "metadata", json_null());
    json_object_set_new(r, "findings", json_array());
    json_object_del(r, "findings_total");
    set_stream_bytes(r, "stdout", "", 0);
    set_stream_bytes(r, "stderr", "", 0);
    while (drop_artifact(r))
        ;
}

int wrk_result_fit(json_t *r, size_t max)
{
    if (!r || max == 0) return 0;
    /* Each round halves one part: ~25 rounds take 16 MiB to nothing. While the parts'
     * lengths alone are over the budget (a bound from below: a character encodes to at least
     * one byte), a round needs no encoding, and it is one that measuring the encoding would
     * take too: jansson writes each escaped control character with an snprintf of its own, ~40
     * ns a byte, and a job can print 16 MiB of them to each stream. Encoded whole every round,
     * that took the worker's thread 10 s (bench/fit_bench.c); now only what the bound leaves
     * is encoded. A result that fits (nearly all) is encoded once, as before. Once an encoding
     * was too large, the bound is the parts' escaped lengths, a scan of ~1 ns a byte: the
     * rounds between it and the budget need no encoding either. */
    int cuts = cut_oversized(r, max);
    bool fits = false, escaped = false;
    for (int round = 0; round < 200; round++) {
        size_t parts;
        int which = largest(r, escaped, &parts);
        if (parts <= max && !(fits = encoded_len(r) <= max)) escaped = true;
        if (fits) break;
        if (!cut_largest(r, which)) break;
        cuts++;
    }
    if (fits || encoded_len(r) <= max) return cuts > 0;
    if (cut_findings(r, max, 1)) return 1;
    replace_with_error(r, max);
    return -1;
}

/* reason cut, at a character's start, until ev fits max; false if it still does not. */
static bool cut_reason(json_t *ev, size_t max)
{
    json_t *r = json_object_get(ev, "reason");
    size_t n = json_string_length(r), size;
    while (json_is_string(r) && n > 0 && (size = encoded_len(ev)) > max) {
        size_t over = size - max + 3; /* "..." */
        n = n > over ? n - over : 0;
        const char *s = json_string_value(r);
        while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80) n--;
        char *cut = malloc(n + 4);
        if (!cut) return false;
        memcpy(cut, s, n);
        memcpy(cut + n, "...", 4);
        json_object_set_new(ev, "reason", wrk_json_text(cut));
        free(cut);
        r = json_object_get(ev, "reason");
    }
    return encoded_len(ev) <= max;
}

/* ev, too large for max: its findings cut, then its code (--audit-code full) left out, then
 * its reason cut. The rest (ids, names, times, hashes, where the record is) is bounded, and
 * every record budget a worker starts with leaves room for it (WRK_RECORD_MIN). */
static int cut_event(json_t *ev, size_t max)
{
    if (cut_findings(ev, max, 0)) return 1;
    if (json_object_get(ev, "code")) {
        json_object_del(ev, "code");
        json_object_set_new(ev, "code_omitted", json_string("too large for one audit record"));
        if (encoded_len(ev) <= max) return 1;
    }
    return cut_reason(ev, max) ? 1 : -1;
}

int wrk_event_fit(json_t *ev, size_t budget)
{
    if (budget == 0) return 0;
    size_t room = wrk_chain_room(), max = budget > room ? budget - room : 1;
    /* Measured without the stamp of an aborted attempt: the next stamp replaces it. */
    json_t *chain = json_object_get(ev, "chain");
    if (chain) {
        json_incref(chain);
        json_object_del(ev, "chain");
    }
    int rc = encoded_len(ev) <= max ? 0 : cut_event(ev, max);
    if (chain) json_object_set_new(ev, "chain", chain);
    return rc;
}
