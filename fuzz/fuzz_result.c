/* fuzz_result: bytes -> a run's output (stdout, stderr, artifacts, any bytes, UTF-8 or not)
 * -> the result the worker publishes (wrk_result_new, wrk_result_set_run, i.e. wrk_json_bytes
 * and base64) -> wrk_result_fit with a small budget taken from the input.
 * Invariants: the result encodes within the budget unless fit said it had to replace it
 * (-1, then a short internal_error with no output, no artifacts, no metadata, which still
 * fits a budget of 1 KiB or more); the encoded
 * result parses again; each stream that lost bytes says *_truncated, its kept bytes (base64
 * when present, else the text) are a prefix of what ran... or of its text form, and *_bytes
 * still counts what the job wrote; dropped artifacts say artifacts_truncated.
 *
 * Input layout: byte 0-1 budget, byte 2 artifact count (0-7) and flags, then length-prefixed
 * (2 bytes) chunks: stdout, stderr, metadata text, then per artifact a path and content. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wrk_internal.h"

typedef struct {
    const uint8_t *p;
    size_t n;
} input;

static size_t take_u16(input *in)
{
    if (in->n < 2) { in->n = 0; return 0; }
    size_t v = (size_t)in->p[0] | (size_t)in->p[1] << 8;
    in->p += 2;
    in->n -= 2;
    return v;
}

/* The next chunk (as much as is left when the input is short); NUL-terminated copy. */
static char *take_chunk(input *in, size_t *len)
{
    size_t n = take_u16(in);
    if (n > in->n) n = in->n;
    char *s = malloc(n + 1);
    if (!s) abort();
    memcpy(s, in->p, n);
    s[n] = '\0';
    in->p += n;
    in->n -= n;
    *len = n;
    return s;
}

static size_t size_of(const json_t *r)
{
    return json_dumpb(r, NULL, 0, JSON_COMPACT);
}

/* The bytes kept for stream `name`: its base64 when present, else its text. */
static char *kept_bytes(json_t *r, const char *name, size_t *len)
{
    char key[32];
    snprintf(key, sizeof key, "%s_base64", name);
    json_t *b64 = json_object_get(r, key), *text = json_object_get(r, name);
    if (!json_is_string(text)) abort();
    if (b64) {
        char *out;
        if (!json_is_string(b64)) abort();
        long n = wrk_base64_decode(json_string_value(b64), json_string_length(b64), SIZE_MAX,
                                   &out);
        if (n < 0) abort(); /* the worker's own base64 must decode */
        *len = (size_t)n;
        return out;
    }
    *len = json_string_length(text);
    char *copy = malloc(*len + 1); /* the text may hold NULs: no strndup */
    if (!copy) abort();
    memcpy(copy, json_string_value(text), *len + 1);
    return copy;
}

static void check_stream(json_t *r, const char *name, const sbx_buf *ran, const char *text,
                         size_t textlen)
{
    char key[32];
    size_t len;
    char *kept = kept_bytes(r, name, &len);
    snprintf(key, sizeof key, "%s_truncated", name);
    bool truncated = json_is_true(json_object_get(r, key));
    /* A prefix of what ran, or (cut from a text form that replaced bad bytes) of that text. */
    bool prefix = (len <= ran->len && memcmp(kept, ran->data, len) == 0) ||
                  (len <= textlen && memcmp(kept, text, len) == 0);
    if (!prefix) abort();
    if (len < ran->len && !truncated) abort();
    if (ran->truncated && !truncated) abort();
    snprintf(key, sizeof key, "%s_bytes", name);
    if (json_integer_value(json_object_get(r, key)) != (json_int_t)ran->total) abort();
    free(kept);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    input in = {data, size};
    size_t budget = 700 + take_u16(&in) % 6000;
    unsigned flags = in.n ? in.p[0] : 0;
    if (in.n) { in.p++; in.n--; }
    size_t nart = flags & 7;

    sbx_result s;
    memset(&s, 0, sizeof s);
    s.status = SBX_OK;
    s.exit_code = 0;
    snprintf(s.message, sizeof s.message, "%s", "");
    s.out.data = take_chunk(&in, &s.out.len);
    s.err.data = take_chunk(&in, &s.err.len);
    s.out.total = s.out.len + ((flags & 8) ? 100 : 0);
    s.out.truncated = flags & 8;
    s.err.total = s.err.len;
    size_t mdlen;
    char *md = take_chunk(&in, &mdlen);
    sbx_file arts[7];
    for (size_t i = 0; i < nart; i++) {
        size_t plen, dlen;
        arts[i].path = take_chunk(&in, &plen);
        arts[i].data = take_chunk(&in, &dlen);
        arts[i].len = dlen;
    }
    s.artifacts = nart ? arts : NULL;
    s.nartifacts = nart;
    s.artifacts_truncated = flags & 16;

    bool lossy;
    json_t *meta = (flags & 32) ? wrk_json_bytes(md, mdlen, &lossy) : NULL;
    json_t *r = wrk_result_new("j-fuzz", "ok", "w", "2026-12-01T00:00:00.000Z", meta);
    json_decref(meta);
    if (!r) abort();
    sbx_limits lim;
    sbx_limits_default(&lim);
    wrk_result_set_run(r, &s, &lim);
    /* The text forms as first built: a stream cut from its text may keep a prefix of these. */
    json_t *out0 = json_incref(json_object_get(r, "stdout")),
           *err0 = json_incref(json_object_get(r, "stderr"));
    size_t before = json_array_size(json_object_get(r, "artifacts"));

    int rc = wrk_result_fit(r, budget);
    size_t after = size_of(r);
    if (rc < -1 || rc > 1) abort();
    if (rc >= 0 && after > budget) abort();
    /* The replacement (no output, artifacts or metadata) is about 720 bytes: it fits any
     * budget from 1 KiB up, so a record is never refused for size. */
    if (rc == -1 && budget >= 1024 && after > budget) abort();
    char *enc = json_dumps(r, JSON_COMPACT);
    json_error_t jerr;
    /* Output may hold NUL bytes: they travel as \u0000, which jansson reads back only when told. */
    json_t *again = enc ? json_loads(enc, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &jerr) : NULL;
    if (!again || !json_equal(again, r)) abort();
    json_decref(again);
    free(enc);
    if (rc == -1) {
        if (strcmp(json_string_value(json_object_get(r, "status")), "internal_error") != 0)
            abort();
        if (json_string_length(json_object_get(r, "stdout")) ||
            json_string_length(json_object_get(r, "stderr")) ||
            json_array_size(json_object_get(r, "artifacts")) ||
            !json_is_null(json_object_get(r, "metadata")))
            abort();
    } else {
        check_stream(r, "stdout", &s.out, json_string_value(out0), json_string_length(out0));
        check_stream(r, "stderr", &s.err, json_string_value(err0), json_string_length(err0));
    }
    size_t nafter = json_array_size(json_object_get(r, "artifacts"));
    if (nafter > before) abort();
    if ((nafter < before || s.artifacts_truncated) &&
        !json_is_true(json_object_get(r, "artifacts_truncated")))
        abort();
    if (rc == 0 && after != size_of(r)) abort();

    json_decref(out0);
    json_decref(err0);
    json_decref(r);
    for (size_t i = 0; i < nart; i++) {
        free((char *)arts[i].path);
        free((char *)arts[i].data);
    }
    free(md);
    free(s.out.data);
    free(s.err.data);
    return 0;
}
