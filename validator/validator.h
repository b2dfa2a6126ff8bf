/* validator: static policy check of a Python program with CPython's own parser.
 *
 * Contract
 * - The source is parsed by the embedded libpython3.11 (the same version as the sandboxed
 *   /usr/bin/python3), from the exact bytes that will run; a syntax error is a finding with
 *   its position, never a crash.
 * - Rules match AST nodes, not text: `# exec(` in a comment or "open(" in a string is no finding.
 * - Every finding is reported, in source order, with a stable rule id.
 * - val_check() returns 0 when the program was examined (findings may be empty or not) and -1
 *   with a message in err when the validator itself failed (the caller reports internal_error).
 * - Not thread-safe: one thread owns the embedded interpreter (the worker loop).
 */
#ifndef CODEQ_VALIDATOR_H
#define CODEQ_VALIDATOR_H

#include <stddef.h>

typedef struct {
    char rule[40];      /* stable id, e.g. "syntax", "import-denied", "call-denied", "attr-denied" */
    char severity[8];   /* "error" | "warning" */
    char message[240];
    int line, col;      /* 1-based line, 1-based column; 0 when unknown */
    int end_line, end_col;
} val_finding;

typedef struct {
    val_finding *items;
    size_t count;
} val_report;

/* Initializes the embedded interpreter once; safe to call again. */
int val_init(char *err, size_t errlen);
int val_check(const char *code, size_t len, val_report *out, char *err, size_t errlen);
void val_report_free(val_report *r);
/* Finalizes the interpreter; val_init may not be called again afterwards. */
void val_shutdown(void);

#endif
