/* val_embed.c: the shipped policy profiles and the runtime guard, built into the binary.
 *
 * Why this shape: policies/strict.json, policies/data.json and validator/val_guard*.py stay
 * ordinary files that people read, diff and lint, and the binary still works with no file
 * installed. The assembler's .incbin copies each file verbatim at build time (CMake passes the
 * source directory and rebuilds this object when a file changes), so the embedded text can
 * never drift from the file. Each blob is followed by a NUL so it is also a C string.
 */
#include "val_internal.h"

#include <string.h>

#ifndef CODEQ_SOURCE_DIR
#error "CODEQ_SOURCE_DIR must name the source tree (set by CMakeLists.txt)"
#endif

#define VAL_EMBED(sym, file)                                                                \
    __asm__(".section .rodata\n"                                                            \
            ".balign 16\n"                                                                  \
            ".global " #sym "\n" #sym ":\n"                                                 \
            ".incbin \"" CODEQ_SOURCE_DIR "/" file "\"\n"                                   \
            ".global " #sym "_end\n" #sym "_end:\n"                                         \
            ".byte 0\n"                                                                     \
            ".previous\n")

VAL_EMBED(val_blob_strict, "policies/strict.json");
VAL_EMBED(val_blob_data, "policies/data.json");
VAL_EMBED(val_blob_guard, "validator/val_guard.py");
VAL_EMBED(val_blob_guard_audit, "validator/val_guard_audit.py");

extern const char val_blob_strict[], val_blob_strict_end[];
extern const char val_blob_data[], val_blob_data_end[];
extern const char val_blob_guard[], val_blob_guard_end[];
extern const char val_blob_guard_audit[], val_blob_guard_audit_end[];

const char *val_profile_json(const char *name) {
    if (!name) return NULL;
    if (strcmp(name, "strict") == 0) return val_blob_strict;
    if (strcmp(name, "data") == 0) return val_blob_data;
    return NULL;
}

const char *val_guard_source(size_t *len) {
    *len = (size_t)(val_blob_guard_end - val_blob_guard);
    return val_blob_guard;
}

const char *val_guard_audit_source(size_t *len) {
    *len = (size_t)(val_blob_guard_audit_end - val_blob_guard_audit);
    return val_blob_guard_audit;
}
