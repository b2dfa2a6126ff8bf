/* Small helpers every worker module needs: clocks, hashes, bytes-to-JSON (logging: wrk_log.c).
 * Hashing and base64 come from OpenSSL's libcrypto rather than hand-written code. */
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "wrk_internal.h"

/* Strict base64: the alphabet only, '=' only as the last one or two characters. OpenSSL's
 * EVP_DecodeBlock trims whitespace and counts padding as zero bytes, so the length is
 * corrected here by the padding, which must therefore be at most two characters: a run of
 * '=' once made n negative and the terminator was written before the buffer. */
static bool base64_strict(const char *in, size_t len, size_t *pad)
{
    *pad = 0;
    while (*pad < 2 && *pad < len && in[len - 1 - *pad] == '=') (*pad)++;
    for (size_t i = 0; i < len - *pad; i++) {
        unsigned char c = (unsigned char)in[i];
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
              c == '+' || c == '/'))
            return false;
    }
    return true;
}

long wrk_base64_decode(const char *in, size_t len, size_t max_len, char **out)
{
    *out = NULL;
    size_t pad;
    if (len % 4 || len > max_len || !base64_strict(in, len, &pad)) return -1;
    *out = malloc(len / 4 * 3 + 1);
    if (!*out) return -1;
    int n = EVP_DecodeBlock((unsigned char *)*out, (const unsigned char *)in, (int)len);
    if (n < 0) {
        free(*out);
        *out = NULL;
        return -1;
    }
    /* EVP_DecodeBlock counts the padding as zero bytes */
    n -= (int)pad;
    if (n < 0 || (size_t)n != len / 4 * 3 - pad) {
        free(*out);
        *out = NULL;
        return -1;
    }
    (*out)[n] = '\0';
    return n;
}

void wrk_now_iso(char out[32])
{
    struct timespec ts;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    size_t n = strftime(out, 32, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(out + n, 32 - n, ".%03ldZ", ts.tv_nsec / 1000000);
}

uint64_t wrk_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

int64_t wrk_now_epoch_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* n decimal digits at s as a number, or -1. */
static int fixed_digits(const char *s, int n)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return -1;
        v = v * 10 + (s[i] - '0');
    }
    return v;
}

static bool in_range(int v, int lo, int hi)
{
    return v >= lo && v <= hi;
}

static int days_in_month(int y, int m)
{
    static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    return m == 2 && leap ? 29 : days[m - 1];
}

/* n digits at s, then the character sep (0: none); the number, or -1. Stops at the first
 * byte that does not match, so a caller that goes on only after a match never reads past
 * the string's end. */
static int field(const char **s, int n, char sep)
{
    int v = fixed_digits(*s, n);
    if (v < 0 || (sep && (*s)[n] != sep)) return -1;
    *s += n + (sep ? 1 : 0);
    return v;
}

/* Fixed-width fields, each against the calendar: a mistyped time (30 February, hour 24) is
 * refused rather than moved to another one, as timegm would. */
static const char *parse_date_time(const char *s, struct tm *tm)
{
    int y, mo, d, h, mi, sec;
    if ((y = field(&s, 4, '-')) < 0 || !in_range(mo = field(&s, 2, '-'), 1, 12) ||
        !in_range(d = field(&s, 2, 0), 1, days_in_month(y, mo)) || (*s != 'T' && *s != 't'))
        return NULL;
    s++;
    if (!in_range(h = field(&s, 2, ':'), 0, 23) || !in_range(mi = field(&s, 2, ':'), 0, 59) ||
        !in_range(sec = field(&s, 2, 0), 0, 60)) /* 60: a leap second, which RFC 3339 allows */
        return NULL;
    *tm = (struct tm){.tm_year = y - 1900, .tm_mon = mo - 1, .tm_mday = d, .tm_hour = h,
                      .tm_min = mi, .tm_sec = sec};
    return s;
}

bool wrk_parse_time_ms(const char *s, int64_t *out)
{
    struct tm tm;
    const char *rest = parse_date_time(s, &tm);
    if (!rest) return false;
    int64_t ms = 0;
    if (*rest == '.') {
        int digits = 0;
        for (rest++; *rest >= '0' && *rest <= '9'; rest++, digits++)
            if (digits < 3) ms = ms * 10 + (*rest - '0');
        if (digits == 0) return false;
        for (; digits < 3; digits++) ms *= 10;
    }
    int offset_min = 0;
    if (*rest == '+' || *rest == '-') {
        int sign = *rest++ == '-' ? -1 : 1, oh, om;
        if (!in_range(oh = field(&rest, 2, ':'), 0, 23) || !in_range(om = field(&rest, 2, 0), 0, 59))
            return false;
        offset_min = sign * (oh * 60 + om);
    } else if (*rest == 'Z' || *rest == 'z') {
        rest++;
    } else {
        return false;
    }
    if (*rest) return false;
    *out = ((int64_t)timegm(&tm) - (int64_t)offset_min * 60) * 1000 + ms;
    return true;
}

void wrk_sha256_hex(const void *data, size_t len, char out[65])
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    EVP_Digest(data, len, md, &mdlen, EVP_sha256(), NULL);
    for (unsigned int i = 0; i < mdlen && i < 32; i++)
        snprintf(out + 2 * i, 3, "%02x", md[i]);
    out[64] = '\0';
}

/* Length of the valid UTF-8 sequence at s (1-4), or 0 if the bytes there are not one.
 * Rejects overlongs, surrogates and code points above U+10FFFF, as jansson does. */
/* The length of the valid UTF-8 sequence at s (its code point in *out), 0 if none. */
static size_t utf8_decode(const unsigned char *s, size_t avail, unsigned *out)
{
    unsigned c = s[0];
    size_t n;
    unsigned cp;
    *out = c;
    if (c < 0x80) return 1;
    if (c >= 0xC2 && c <= 0xDF) { n = 2; cp = c & 0x1F; }
    else if (c >= 0xE0 && c <= 0xEF) { n = 3; cp = c & 0x0F; }
    else if (c >= 0xF0 && c <= 0xF4) { n = 4; cp = c & 0x07; }
    else return 0;
    if (avail < n) return 0;
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10FFFF ||
        (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    *out = cp;
    return n;
}

static size_t utf8_seq(const unsigned char *s, size_t avail)
{
    unsigned cp;
    return utf8_decode(s, avail, &cp);
}

json_t *wrk_json_bytes(const char *data, size_t len, bool *lossy)
{
    const unsigned char *s = (const unsigned char *)data;
    size_t valid = 0, n;
    while (valid < len && (n = s[valid] < 0x80 ? 1 : utf8_seq(s + valid, len - valid)))
        valid += n;
    *lossy = valid < len;
    /* Checked as jansson checks, so not again: a job's output is up to 16 MiB a stream, and
     * this is the worker's thread. */
    if (!*lossy) return json_stringn_nocheck(data, len);
    char *buf = malloc(len * 3 + 1); /* worst case: every byte becomes U+FFFD (3 bytes) */
    if (!buf) return NULL;
    memcpy(buf, data, valid);
    size_t o = valid;
    for (size_t i = valid; i < len;) {
        n = utf8_seq(s + i, len - i);
        if (n == 0) {
            memcpy(buf + o, "\xEF\xBF\xBD", 3);
            o += 3;
            i += 1;
        } else {
            memcpy(buf + o, s + i, n);
            o += n;
            i += n;
        }
    }
    json_t *j = json_stringn_nocheck(buf, o); /* valid: made of valid sequences and U+FFFD */
    free(buf);
    return j;
}

json_t *wrk_json_text(const char *s)
{
    bool lossy;
    return wrk_json_bytes(s, strlen(s), &lossy);
}

json_t *wrk_json_base64(const char *data, size_t len)
{
    size_t cap = 4 * ((len + 2) / 3) + 1;
    unsigned char *out = malloc(cap);
    if (!out) return NULL;
    int n = EVP_EncodeBlock(out, (const unsigned char *)data, (int)len);
    json_t *j = json_stringn((const char *)out, (size_t)n);
    free(out);
    return j;
}

/* A character that can be part of a relative path (`d/e`, `codeq/job-17`): a '/' after one
 * continues that path; any other '/' begins an absolute one. */
static bool path_char(char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
           ch == '.' || ch == '-' || ch == '_' || ch == '/' || ch == '~' || ch == '+';
}

size_t wrk_elide_paths(const char *in, char *out, size_t n)
{
    static const char mark[] = "<host path>";
    size_t at = 0, elided = 0;
    if (!n) return 0;
    for (size_t i = 0; in[i];) {
        if (in[i] == '/' && (i == 0 || !path_char(in[i - 1]))) {
            while (in[i] && !strchr("):,; '\"]>", in[i])) i++;
            for (const char *m = mark; *m && at + 1 < n; m++) out[at++] = *m;
            elided++;
            continue;
        }
        if (at + 1 < n) out[at++] = in[i];
        i++;
    }
    out[at] = '\0';
    return elided;
}

unsigned wrk_hidden_at(const unsigned char *s, size_t avail, size_t *len)
{
    static const unsigned hidden[][2] = {
        {0x80, 0x9f},     {0xad, 0xad},     {0x61c, 0x61c},   {0x180e, 0x180e},
        {0x200b, 0x200b}, {0x200e, 0x200f}, {0x2028, 0x202e}, {0x2060, 0x2064},
        {0x2066, 0x206f}, {0xfeff, 0xfeff}, {0xfff9, 0xfffb}, {0xe0000, 0xe007f},
    };
    unsigned cp;
    size_t n = avail ? utf8_decode(s, avail, &cp) : 0;
    *len = 0;
    for (size_t i = 0; n > 1 && i < sizeof hidden / sizeof hidden[0]; i++)
        if (cp >= hidden[i][0] && cp <= hidden[i][1]) {
            *len = n;
            return cp;
        }
    return 0;
}

size_t wrk_escape(const char *s, size_t n, bool keep_lines, char *out, size_t outn)
{
    const unsigned char *c = (const unsigned char *)s;
    size_t i = 0, at = 0;
    if (!outn) return 0;
    while (i < n) {
        char esc[12];
        size_t k = 1, hl;
        unsigned h = wrk_hidden_at(c + i, n - i, &hl);
        if (h) {
            snprintf(esc, sizeof esc, "\\u%04x", h);
            k = hl;
        } else if ((c[i] < 0x20 && !(keep_lines && (c[i] == '\n' || c[i] == '\t'))) ||
                   c[i] == 0x7f) {
            snprintf(esc, sizeof esc, "\\x%02x", c[i]);
        } else {
            esc[0] = (char)c[i];
            esc[1] = '\0';
        }
        size_t len = strlen(esc);
        if (at + len >= outn) break;
        memcpy(out + at, esc, len);
        at += len;
        i += k;
    }
    out[at] = '\0';
    return i;
}

void wrk_id_part(const char *name, size_t max_chars, char *out, size_t n)
{
    const unsigned char *s = (const unsigned char *)name;
    size_t len = strlen(name), at = 0, chars = 0;
    if (!n) return;
    for (size_t i = 0; i < len && chars < max_chars;) {
        size_t k = utf8_seq(s + i, len - i);
        size_t hl;
        bool control = (k == 1 && (s[i] < 0x20 || s[i] == 0x7f)) || wrk_hidden_at(s + i, k, &hl);
        if (k == 0 || control) { /* one byte or one control character, shown as '_' */
            if (at + 1 >= n) break;
            out[at++] = '_';
            i += k ? k : 1;
        } else {
            if (at + k >= n) break;
            memcpy(out + at, s + i, k);
            at += k;
            i += k;
        }
        chars++;
    }
    out[at] = '\0';
}

const char *wrk_s(long long n)
{
    return n == 1 ? "" : "s";
}
