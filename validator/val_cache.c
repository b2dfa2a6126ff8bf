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
 */
#include "val_internal.h"

#include <openssl/evp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define VAL_CACHE_SLOTS 256
#define VAL_CACHE_MAX_FINDINGS 32

typedef struct {
    unsigned char digest[32];
    uint64_t serial;     /* 0: empty */
    val_finding *items;
    size_t count;
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

int val_cache_get(const val_policy *p, const unsigned char key[32], val_report *out) {
    val_cache_slot *s = slot_of(key);
    if (cache_off || !s->serial || s->serial != p->serial || memcmp(s->digest, key, 32) != 0)
        return 0;
    val_finding *items = NULL;
    if (s->count) {
        if (!(items = malloc(s->count * sizeof *items))) return 0;
        memcpy(items, s->items, s->count * sizeof *items);
    }
    out->items = items;
    out->count = s->count;
    return 1;
}

void val_cache_put(const val_policy *p, const unsigned char key[32], const val_report *r) {
    if (cache_off || r->count > VAL_CACHE_MAX_FINDINGS) return;
    val_finding *items = NULL;
    if (r->count && !(items = malloc(r->count * sizeof *items))) return; /* just not cached */
    if (r->count) memcpy(items, r->items, r->count * sizeof *items);
    val_cache_slot *s = slot_of(key);
    free(s->items);
    memcpy(s->digest, key, 32);
    s->serial = p->serial;
    s->items = items;
    s->count = r->count;
}
