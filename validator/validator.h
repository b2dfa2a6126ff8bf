/* validator: static policy check of a Python program with CPython's own parser, and the
 * runtime guard that repeats the policy inside the sandboxed interpreter.
 *
 * Contract
 * - The source is parsed by the embedded libpython3.11 (the same version as the sandboxed
 *   /usr/bin/python3), from the exact bytes that will run; a syntax error is a finding with
 *   its position, never a crash.
 * - Rules match AST nodes, not text: `# exec(` in a comment or "open(" in a string is no finding.
 * - Every finding is reported, in source order, with a stable rule id (docs/validator.md).
 * - What is allowed is a val_policy chosen by the operator (a JSON file or a built-in profile,
 *   schemas/policy.schema.json); nothing in a job can change it.
 * - val_check*() returns 0 when the program was examined (findings may be empty or not) and -1
 *   with a message in err when the validator itself failed (the caller reports internal_error).
 * - Not thread-safe: one thread owns the embedded interpreter (the worker loop).
 */
#ifndef CODEQ_VALIDATOR_H
#define CODEQ_VALIDATOR_H

#include <stddef.h>

typedef struct {
    char rule[40];      /* stable id, e.g. "syntax", "import-denied", "call-denied", "dunder-attr" */
    char severity[8];   /* "error" | "warning" */
    char message[240];
    int line, col;      /* 1-based line, 1-based column; 0 when unknown */
    int end_line, end_col;
} val_finding;

typedef struct {
    val_finding *items;
    size_t count;
} val_report;

typedef struct val_policy val_policy;

/* Initializes the embedded interpreter once; safe to call again. */
int val_init(char *err, size_t errlen);

/* A policy from a built-in profile name ("strict", "data") or a JSON file path. The profile
 * names win over files of the same name; use "./strict" for a file. NULL on error (err set).
 * Needs no interpreter; module tables are built on first use by val_check_policy. */
val_policy *val_policy_load(const char *name_or_path, char *err, size_t errlen);
/* From JSON text (what a policy file holds); `origin` names it in error messages. */
val_policy *val_policy_parse(const char *json, size_t len, const char *origin, char *err,
                             size_t errlen);
/* The built-in default ("strict"), owned by the library: never free it. */
const val_policy *val_policy_default(void);
const char *val_policy_name(const val_policy *p);
/* The top-level modules the policy allows: how many, and the i-th (owned by p). */
size_t val_policy_nmodules(const val_policy *p);
const char *val_policy_module(const val_policy *p, size_t i);
/* JSON text of a built-in profile, NULL for an unknown name (for tests and `--help`). */
const char *val_profile_json(const char *name);
void val_policy_free(val_policy *p);

/* The runtime guard for this policy: Python source the sandbox runs instead of main.py (see
 * sbx_job.prelude); it enforces the policy's import allowlist, builtins and module surface, then
 * runs main.py as __main__. NULL with *len 0 when the policy turns the guard off. Owned by p. */
const char *val_policy_guard(const val_policy *p, size_t *len);

/* Checks against the default policy. */
int val_check(const char *code, size_t len, val_report *out, char *err, size_t errlen);
/* Checks against p (NULL: the default policy). */
int val_check_policy(const val_policy *p, const char *code, size_t len, val_report *out,
                     char *err, size_t errlen);
void val_report_free(val_report *r);

/* A program compiled from the very parse its check walked ("parse once"): the job then runs
 * this code object instead of having its source parsed again in the sandbox. `data` is the
 * embedded interpreter's 4-byte magic (importlib.util.MAGIC_NUMBER, the .pyc header's) followed
 * by marshal.dumps(code); marshal's format is version-specific, so a reader refuses bytes whose
 * magic is not its own. Empty (NULL, 0) when there is none. */
typedef struct {
    char *data;
    size_t len;
} val_code;
enum { VAL_CODE_MAGIC_LEN = 4 };

/* val_check_policy, and when the program has no finding and `filename` is not NULL, also
 * compile(tree, filename, "exec", dont_inherit=True) of the same tree into *obj (the verdict
 * cache keeps it, so a hit parses nothing either). *obj stays empty when the program has
 * findings, or when only compiling it fails (e.g. `return` outside a function, which the
 * parser accepts and the compiler refuses): the sandbox then compiles the source itself and
 * reports the program's error exactly as before. Return values as val_check_policy. */
int val_check_compile(const val_policy *p, const char *code, size_t len, const char *filename,
                      val_report *out, val_code *obj, char *err, size_t errlen);
void val_code_free(val_code *c);

/* Verdicts of the last programs checked are kept (keyed by SHA-256 of the bytes and the
 * policy) and served without parsing again; on by default. Off also empties it. */
void val_cache_enable(int on);
void val_cache_clear(void);
/* Finalizes the interpreter; val_init may not be called again afterwards. */
void val_shutdown(void);

#endif
