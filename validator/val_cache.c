/* val_cache.c: verdicts of recently checked programs, keyed by SHA-256 of the exact bytes and
 * the policy they were checked against.
 *
 * Why: agents resubmit the same program often (retries, the same tool call in many runs), and a
 * verdict is a pure function of (bytes, policy): CPython's parse is ~95% of a check, so a hit
 * costs a hash instead of a parse. It does nothing for a program never seen before; the
 * benchmark reports both cases separately.
 * Shape: direct-mapped, fixed size, no eviction policy beyond "the newest wins the slot": no
 * unbounded growth, no bookkeeping on the hot path. The key is a cryptographic hash because a
 * job must not be able to craft a collision that hands it another program's verdict. The
 * policy is identified by a serial number given at load, never by its address (a freed policy's
 * address can be reused by a different one). Reports with many findings are not kept: rejected
 * programs are rarely resubmitted unchanged and they would dominate the memory bound.
 * A clean verdict also keeps the program's marshalled code object (val_check_compile), up to
 * VAL_CACHE_MAX_CODE bytes: copying it back costs microseconds where compiling again would
 * cost a whole parse (bench/parse_once_bench measures both); the bound keeps the cache's memory
 * at 256 x 64 KiB at most (a 100-line program's object is ~8 KiB).
 */
#include "val_internal.h"

#include <openssl/evp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VAL_CACHE_SLOTS 256
#define VAL_CACHE_MAX_FINDINGS 32
#define VAL_CACHE_MAX_CODE (64 * 1024)

typedef struct {
    unsigned char digest[32];
    uint64_t serial;     /* 0: empty */
    val_finding *items;
    size_t count;
    char *obj;           /* val_code bytes compiled for obj_file; NULL: none kept */
    size_t obj_len;
    char obj_file[64];
} val_cache_slot;

static val_cache_slot slots[VAL_CACHE_SLOTS];
static int cache_off;

void val_cache_enable(int on) {
    cache_off = !on;
    if (cache_off) val_cache_clear();
}

void val_cache_clear(void) {
    for (size_t i = 0; i < VAL_CACHE_SLOTS; i++) {
        free(slots[i].items);
        free(slots[i].obj);
        memset(&slots[i], 0, sizeof slots[i]);
    }
}

/* Fills key; returns 0, or -1 when hashing failed (the caller then just checks uncached). */
int val_cache_key(const char *code, size_t len, unsigned char key[32]) {
    unsigned int n = 0;
    return EVP_Digest(code, len, key, &n, EVP_sha256(), NULL) == 1 && n == 32 ? 0 : -1;
}

static val_cache_slot *slot_of(const unsigned char key[32]) {
    return &slots[(key[0] | (unsigned)key[1] << 8) % VAL_CACHE_SLOTS];
}

static char *dup_bytes(const char *b, size_t n) {
    char *d = malloc(n);
    if (d) memcpy(d, b, n);
    return d;
}

int val_cache_get(const val_policy *p, const unsigned char key[32], const char *filename,
                  val_report *out, val_code *obj) {
    val_cache_slot *s = slot_of(key);
    if (cache_off || !s->serial || s->serial != p->serial || memcmp(s->digest, key, 32) != 0)
        return 0;
    /* A clean program asked with a name needs its code object: without one kept for exactly
     * that name, parsing again is the only way to get it. */
    bool want = filename && s->count == 0;
    if (want && (!s->obj || strcmp(s->obj_file, filename) != 0)) return 0;
    val_finding *items = NULL;
    if (s->count && !(items = (val_finding *)dup_bytes((const char *)s->items,
                                                         s->count * sizeof *items)))
        return 0;
    if (want && !(obj->data = dup_bytes(s->obj, s->obj_len))) {
        free(items);
        return 0;
    }
    if (want) obj->len = s->obj_len;
    out->items = items;
    out->count = s->count;
    return 1;
}

void val_cache_put(const val_policy *p, const unsigned char key[32], const char *filename,
                   const val_report *r, const val_code *obj) {
    if (cache_off || r->count > VAL_CACHE_MAX_FINDINGS) return;
    val_finding *items = NULL;
    if (r->count && !(items = (val_finding *)dup_bytes((const char *)r->items,
                                                       r->count * sizeof *items)))
        return; /* just not cached */
    char *code = NULL;
    bool keep = filename && obj && obj->data && obj->len <= VAL_CACHE_MAX_CODE &&
                strlen(filename) < sizeof ((val_cache_slot *)0)->obj_file;
    if (keep && !(code = dup_bytes(obj->data, obj->len))) keep = false;
    val_cache_slot *s = slot_of(key);
    free(s->items);
    free(s->obj);
    memcpy(s->digest, key, 32);
    s->serial = p->serial;
    s->items = items;
    s->count = r->count;
    s->obj = code;
    s->obj_len = keep ? obj->len : 0;
    snprintf(s->obj_file, sizeof s->obj_file, "%s", keep ? filename : "");
}
