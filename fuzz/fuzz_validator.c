/* fuzz_validator: any bytes as a Python program -> val_check_policy under the built-in strict
 * policy, with the verdict cache off so every input is parsed. It must never crash: CPython's
 * parse errors (SyntaxError, bad encodings, NUL bytes, nesting too deep) are `syntax` findings,
 * not failures, so the validator itself failing (-1) is a crash too. Each finding must be well
 * formed: a rule id, a severity of "error" or "warning", positions not negative.
 *
 * The embedded interpreter keeps caches and interned objects for the life of the process; they
 * are not leaks of the validator, so LeakSanitizer ignores allocations made inside libpython.
 * Leaks of the validator's own C allocations are still reported. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "validator.h"

const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
    return "leak:libpython3.11.so\n"
           "leak:libcrypto.so.3\n";
}

static val_policy *strict;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    char err[512];
    if (val_init(err, sizeof err) != 0) {
        fprintf(stderr, "fuzz_validator: val_init: %s\n", err);
        abort();
    }
    val_cache_enable(0);
    strict = val_policy_load("strict", err, sizeof err);
    if (!strict) {
        fprintf(stderr, "fuzz_validator: policy: %s\n", err);
        abort();
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    val_report rep = {0};
    char err[512] = "";
    if (val_check_policy(strict, (const char *)data, size, &rep, err, sizeof err) != 0) {
        fprintf(stderr, "fuzz_validator: the validator failed: %s\n", err);
        abort();
    }
    if (rep.count && !rep.items) abort();
    for (size_t i = 0; i < rep.count; i++) {
        const val_finding *f = &rep.items[i];
        if (!memchr(f->rule, 0, sizeof f->rule) || !f->rule[0]) abort();
        if (!memchr(f->message, 0, sizeof f->message)) abort();
        if (strcmp(f->severity, "error") != 0 && strcmp(f->severity, "warning") != 0) abort();
        if (f->line < 0 || f->col < 0 || f->end_line < 0 || f->end_col < 0) abort();
    }
    val_report_free(&rep);
    return 0;
}
