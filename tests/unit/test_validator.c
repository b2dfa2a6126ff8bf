/* test_validator: the validator against real CPython parses, with exact rules and positions.
 *
 * One interpreter for the whole group (val_init in setup, val_shutdown in teardown), the way
 * the worker uses it. Columns are 1-based; for AST findings they are UTF-8 byte columns
 * (col_offset + 1), for syntax findings CPython's SyntaxError.offset.
 */
#include "val_internal.h" /* first: it includes Python.h, which wants to precede libc headers */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <unistd.h>

#include "validator.h"

static val_report run_len(const char *src, size_t len) {
    val_report r = {0};
    char err[512] = "";
    int rc = val_check(src, len, &r, err, sizeof err);
    if (rc != 0) fail_msg("val_check failed: %s", err);
    return r;
}

static val_report run(const char *src) { return run_len(src, strlen(src)); }

/* A policy that allows os and posix, for the attr-denied rule (os is not in the built-in
 * profiles, so there it is import-denied before attr-denied matters). */
static val_policy *with_os;
static const char with_os_json[] =
    "{\"name\": \"with-os\", \"modules\": [\"os\", \"posix\", \"posixpath\", \"json\", \"math\", \"sys\"]}";

static val_report run_os(const char *src) {
    val_report r = {0};
    char err[512] = "";
    if (val_check_policy(with_os, src, strlen(src), &r, err, sizeof err) != 0)
        fail_msg("val_check_policy failed: %s", err);
    return r;
}

static void print_report(const val_report *r) {
    for (size_t i = 0; i < r->count; i++)
        print_message("  %s %d:%d-%d:%d %s\n", r->items[i].rule, r->items[i].line,
                      r->items[i].col, r->items[i].end_line, r->items[i].end_col,
                      r->items[i].message);
}

static void expect_count(const val_report *r, size_t n) {
    if (r->count != n) print_report(r);
    assert_int_equal(r->count, n);
}

static void expect_at(const val_report *r, size_t i, const char *rule, int line, int col) {
    assert_true(i < r->count);
    assert_string_equal(r->items[i].rule, rule);
    assert_string_equal(r->items[i].severity, "error");
    assert_int_equal(r->items[i].line, line);
    assert_int_equal(r->items[i].col, col);
}

static void expect_clean(const char *src) {
    val_report r = run(src);
    expect_count(&r, 0);
    val_report_free(&r);
}

/* ---- clean programs ---- */

static void test_clean_program(void **state) {
    (void)state;
    expect_clean("x = 1\nprint(x + 2)\n");
}

static void test_empty_program(void **state) {
    (void)state;
    expect_clean("");
}

static void test_comments_and_strings_mentioning_calls(void **state) {
    (void)state;
    expect_clean("# exec(\"rm -rf /\") and open('x')\n"
                 "s = \"open(\" + 'exec(' + '__import__(\"os\")'\n"
                 "doc = '''import subprocess\nos.system('id')'''\n"
                 "print(s, doc)  # eval(\n");
}

static void test_main_guard_class_fstrings(void **state) {
    (void)state;
    expect_clean("class Point:\n"
                 "    def __init__(self, x, y):\n"
                 "        self.x, self.y = x, y\n"
                 "    def __repr__(self):\n"
                 "        return f\"Point({self.x!r}, {self.y:>4})\"\n"
                 "\n"
                 "if __name__ == \"__main__\":\n"
                 "    print(f\"{Point(1, 2)} {'exec(' + 'x'}\")\n");
}

static void test_harmless_names_that_look_close(void **state) {
    (void)state;
    /* Attributes and methods named like the builtins, os.path, an unrelated .system. */
    val_report r = run_os("import os\nimport os.path as p\n"
                          "class Job:\n"
                          "    def open(self): return self.exec()\n"
                          "    def exec(self): return 1\n"
                          "j = Job(); j.open(); platform = object()\n"
                          "print(os.path.join('a', 'b'), os.getcwd(), p.system if False else 0)\n");
    expect_count(&r, 0);
    val_report_free(&r);
}

static const char typical_program[] =
    "import json, sys, math\n"
    "from collections import defaultdict\n"
    "from dataclasses import dataclass\n"
    "\n"
    "@dataclass\n"
    "class Item:\n"
    "    name: str\n"
    "    price: float\n"
    "    qty: int = 1\n"
    "\n"
    "    def total(self) -> float:\n"
    "        return self.price * self.qty\n"
    "\n"
    "\n"
    "class Inventory:\n"
    "    def __init__(self):\n"
    "        self.items = {}\n"
    "        self.log = []\n"
    "\n"
    "    def add(self, item: Item) -> None:\n"
    "        if item.name in self.items:\n"
    "            self.items[item.name].qty += item.qty\n"
    "        else:\n"
    "            self.items[item.name] = item\n"
    "        self.log.append(f\"added {item.name} x{item.qty}\")\n"
    "\n"
    "    def remove(self, name: str, qty: int = 1) -> bool:\n"
    "        it = self.items.get(name)\n"
    "        if it is None or it.qty < qty:\n"
    "            return False\n"
    "        it.qty -= qty\n"
    "        if it.qty == 0:\n"
    "            del self.items[name]\n"
    "        self.log.append(f\"removed {name} x{qty}\")\n"
    "        return True\n"
    "\n"
    "    def value(self) -> float:\n"
    "        return sum(i.total() for i in self.items.values())\n"
    "\n"
    "    def report(self):\n"
    "        rows = sorted(self.items.values(), key=lambda i: (-i.total(), i.name))\n"
    "        for r in rows:\n"
    "            print(f\"{r.name:<10} {r.qty:>4} {r.price:>8.2f} {r.total():>10.2f}\")\n"
    "        print(\"-\" * 36)\n"
    "        print(f\"{'total':<10} {'':>4} {'':>8} {self.value():>10.2f}\")\n"
    "\n"
    "\n"
    "def fib(n):\n"
    "    a, b = 0, 1\n"
    "    out = []\n"
    "    for _ in range(n):\n"
    "        out.append(a)\n"
    "        a, b = b, a + b\n"
    "    return out\n"
    "\n"
    "\n"
    "def primes(limit):\n"
    "    sieve = [True] * (limit + 1)\n"
    "    sieve[0:2] = [False, False]\n"
    "    for i in range(2, int(math.sqrt(limit)) + 1):\n"
    "        if sieve[i]:\n"
    "            for j in range(i * i, limit + 1, i):\n"
    "                sieve[j] = False\n"
    "    return [i for i, p in enumerate(sieve) if p]\n"
    "\n"
    "\n"
    "def word_counts(text):\n"
    "    counts = defaultdict(int)\n"
    "    for word in text.lower().split():\n"
    "        word = word.strip(\".,;:!?\\\"'()\")\n"
    "        if word:\n"
    "            counts[word] += 1\n"
    "    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))\n"
    "\n"
    "\n"
    "def safe_div(a, b):\n"
    "    try:\n"
    "        return a / b\n"
    "    except ZeroDivisionError:\n"
    "        return float(\"nan\")\n"
    "    finally:\n"
    "        pass\n"
    "\n"
    "\n"
    "def main(argv):\n"
    "    inv = Inventory()\n"
    "    inv.add(Item(\"apple\", 0.5, 10))\n"
    "    inv.add(Item(\"pear\", 0.75, 4))\n"
    "    inv.add(Item(\"melon\", 2.0))\n"
    "    inv.remove(\"apple\", 3)\n"
    "    inv.report()\n"
    "    print(fib(15))\n"
    "    print(primes(50))\n"
    "    text = \"the quick brown fox jumps over the lazy dog. The dog sleeps!\"\n"
    "    print(json.dumps(word_counts(text), indent=None))\n"
    "    print(safe_div(1, 0), safe_div(6, 3))\n"
    "    data = {\"env\": \"local\", \"args\": argv[1:], \"max\": max([3, 1, 4, 1, 5])}\n"
    "    squares = {k: k * k for k in range(5)}\n"
    "    evens = [x for x in range(20) if x % 2 == 0]\n"
    "    print(data, squares, evens)\n"
    "    return 0\n"
    "\n"
    "\n"
    "if __name__ == \"__main__\":\n"
    "    sys.exit(main(sys.argv))\n";

static void test_typical_100_line_program(void **state) {
    (void)state;
    int lines = 0;
    for (const char *p = typical_program; *p; p++) lines += *p == '\n';
    assert_true(lines >= 100);
    expect_clean(typical_program);
}

/* ---- syntax ---- */

static void test_syntax_error_position(void **state) {
    (void)state;
    val_report r = run("x = 1\ndef f(:\n    pass\n");
    expect_count(&r, 1);
    expect_at(&r, 0, "syntax", 2, 7);
    assert_int_equal(r.items[0].end_line, 2);
    assert_int_equal(r.items[0].end_col, 8);
    assert_string_equal(r.items[0].message, "invalid syntax");
    val_report_free(&r);
}

static void test_indentation_error_is_syntax(void **state) {
    (void)state;
    val_report r = run("def f():\nreturn 1\n");
    expect_count(&r, 1);
    expect_at(&r, 0, "syntax", 2, 1);
    assert_non_null(strstr(r.items[0].message, "expected an indented block"));
    val_report_free(&r);
}

static void test_nul_byte_is_syntax_not_crash(void **state) {
    (void)state;
    static const char src[] = "x = 1\n\0exec('1')\n";
    val_report r = run_len(src, sizeof src - 1);
    expect_count(&r, 1);
    assert_string_equal(r.items[0].rule, "syntax");
    assert_non_null(strstr(r.items[0].message, "null bytes"));
    val_report_free(&r);
}

static void test_invalid_utf8_is_syntax(void **state) {
    (void)state;
    val_report r = run("x = \"\xff\"\n");
    expect_count(&r, 1);
    expect_at(&r, 0, "syntax", 1, 8);
    assert_non_null(strstr(r.items[0].message, "utf-8"));
    val_report_free(&r);
}

static void test_latin1_coding_cookie(void **state) {
    (void)state;
    /* \xe9 alone is invalid UTF-8: it parses only if the cookie is honoured. */
    expect_clean("# -*- coding: latin-1 -*-\ns = \"caf\xe9\"\nprint(s)\n");
    /* And the rules still see the code after a cookie. */
    val_report r = run("# -*- coding: latin-1 -*-\ns = \"caf\xe9\"\nexec(s)\n");
    expect_count(&r, 1);
    expect_at(&r, 0, "call-denied", 3, 1);
    val_report_free(&r);
}

static void test_utf8_bom(void **state) {
    (void)state;
    expect_clean("\xef\xbb\xbfprint('h\xc3\xa9llo')\n");
    val_report r = run("\xef\xbb\xbf" "eval('1')\n");
    expect_count(&r, 1);
    expect_at(&r, 0, "call-denied", 1, 1); /* the BOM is not part of the line */
    val_report_free(&r);
}

static char *repeat_wrap(const char *open, const char *mid, const char *close, int n) {
    size_t lo = strlen(open), lm = strlen(mid), lc = strlen(close);
    char *s = malloc(n * (lo + lc) + lm + 2);
    assert_non_null(s);
    char *p = s;
    for (int i = 0; i < n; i++, p += lo) memcpy(p, open, lo);
    memcpy(p, mid, lm);
    p += lm;
    for (int i = 0; i < n; i++, p += lc) memcpy(p, close, lc);
    *p++ = '\n';
    *p = '\0';
    return s;
}

static void test_deep_parentheses(void **state) {
    (void)state;
    const char *shapes[][2] = {{"(", ")"}, {"[", "]"}, {"f(", ")"}};
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
        char *src = repeat_wrap(shapes[k][0], "1", shapes[k][1], 5000);
        val_report r = run(src);
        expect_count(&r, 1);
        assert_string_equal(r.items[0].rule, "syntax");
        assert_string_equal(r.items[0].message, "too many nested parentheses");
        val_report_free(&r);
        free(src);
    }
}

static void test_deep_unary_chain(void **state) {
    (void)state;
    /* No brackets, so the tokenizer's limit does not apply; CPython's parser gives up. */
    char *src = repeat_wrap("-", "x", "", 100000);
    val_report r = run(src);
    expect_count(&r, 1);
    assert_string_equal(r.items[0].rule, "syntax");
    val_report_free(&r);
    free(src);
}

static void test_deep_operator_chain_is_too_deep(void **state) {
    (void)state;
    /* 1500 left-nested BinOps: CPython parses it, the walk stops at VAL_MAX_DEPTH. */
    size_t n = 1500;
    char *src = malloc(2 * n + 32);
    assert_non_null(src);
    char *p = stpcpy(src, "x = a");
    for (size_t i = 1; i < n; i++) p = stpcpy(p, "+a");
    strcpy(p, "\nexec('late')\n");
    val_report r = run(src);
    expect_count(&r, 2);
    expect_at(&r, 0, "too-deep", 1, 5);
    /* A deep expression does not stop the rest of the program from being checked. */
    expect_at(&r, 1, "call-denied", 2, 1);
    val_report_free(&r);
    free(src);
}

static void test_parser_warnings_stay_quiet(void **state) {
    (void)state;
    /* CPython warns about these while parsing; the worker's stderr must not carry them. */
    FILE *tmp = tmpfile();
    assert_non_null(tmp);
    fflush(stderr);
    int saved = dup(2);
    assert_true(saved >= 0);
    assert_int_equal(dup2(fileno(tmp), 2), 2);
    val_report r = run("x = '\\d'\ny = 0in [1]\nif x is 1: pass\n");
    fflush(stderr);
    assert_int_equal(dup2(saved, 2), 2);
    close(saved);
    long size = ftell(tmp) >= 0 ? (fseek(tmp, 0, SEEK_END), ftell(tmp)) : -1;
    fclose(tmp);
    expect_count(&r, 0);
    val_report_free(&r);
    assert_int_equal(size, 0);
}

/* ---- call-denied ---- */

static void test_exec_on_line_3(void **state) {
    (void)state;
    val_report r = run("x = 1\ny = 2\nexec('1')\n");
    expect_count(&r, 1);
    expect_at(&r, 0, "call-denied", 3, 1);
    assert_int_equal(r.items[0].end_line, 3);
    assert_int_equal(r.items[0].end_col, 10);
    assert_string_equal(r.items[0].message, "call to exec() is not allowed");
    val_report_free(&r);
}

static void test_dunder_import(void **state) {
    (void)state;
    val_report r = run("m = __import__('os')\n");
    expect_count(&r, 1);
    expect_at(&r, 0, "call-denied", 1, 5);
    assert_string_equal(r.items[0].message, "call to __import__() is not allowed");
    val_report_free(&r);
}

static void test_nested_and_other_builtins(void **state) {
    (void)state;
    val_report r = run("def f():\n    return [eval(s) for s in open('x')]\n"
                       "compile('1', 'f', 'exec')\n"
                       "breakpoint()\n");
    expect_count(&r, 4);
    expect_at(&r, 0, "call-denied", 2, 13);
    assert_string_equal(r.items[0].message, "call to eval() is not allowed");
    expect_at(&r, 1, "call-denied", 2, 30);
    assert_string_equal(r.items[1].message, "call to open() is not allowed");
    expect_at(&r, 2, "call-denied", 3, 1);
    expect_at(&r, 3, "call-denied", 4, 1);
    val_report_free(&r);
}

static void test_exec_as_decorator(void **state) {
    (void)state;
    val_report r = run("@exec\ndef f():\n    pass\n\n"
                       "class C:\n    @eval\n    async def g(self): pass\n");
    expect_count(&r, 2);
    expect_at(&r, 0, "call-denied", 1, 2);
    assert_string_equal(r.items[0].message, "use of exec() as a decorator is not allowed");
    expect_at(&r, 1, "call-denied", 6, 6);
    val_report_free(&r);
}

/* ---- import-denied ---- */

static void test_import_subprocess(void **state) {
    (void)state;
    val_report r = run("import subprocess\n");
    expect_count(&r, 1);
    expect_at(&r, 0, "import-denied", 1, 8);
    assert_string_equal(r.items[0].message, "import of module 'subprocess' is not allowed by policy strict");
    val_report_free(&r);
}

static void test_from_shutil_import(void **state) {
    (void)state;
    val_report r = run("x = 0\nfrom shutil import rmtree\n");
    expect_count(&r, 1);
    expect_at(&r, 0, "import-denied", 2, 1);
    assert_string_equal(r.items[0].message, "import of module 'shutil' is not allowed by policy strict");
    val_report_free(&r);
}

static void test_import_submodule_and_list(void **state) {
    (void)state;
    val_report r = run("import os, subprocess.foo as sp, json, ctypes\nimport importlib.util\n"
                       "from pty import spawn\n");
    expect_count(&r, 5);
    expect_at(&r, 0, "import-denied", 1, 8);
    assert_string_equal(r.items[0].message, "import of module 'os' is not allowed by policy strict");
    expect_at(&r, 1, "import-denied", 1, 12);
    assert_string_equal(r.items[1].message, "import of module 'subprocess' is not allowed by policy strict");
    expect_at(&r, 2, "import-denied", 1, 40);
    assert_string_equal(r.items[2].message, "import of module 'ctypes' is not allowed by policy strict");
    expect_at(&r, 3, "import-denied", 2, 8);
    expect_at(&r, 4, "import-denied", 3, 1);
    val_report_free(&r);
}

/* ---- attr-denied ---- */

static void test_os_system(void **state) {
    (void)state;
    val_report r = run_os("import os; os.system('id')\n");
    expect_count(&r, 1);
    expect_at(&r, 0, "attr-denied", 1, 12);
    assert_int_equal(r.items[0].end_col, 21);
    assert_string_equal(r.items[0].message, "use of os.system is not allowed");
    val_report_free(&r);
}

static void test_os_alias_system(void **state) {
    (void)state;
    val_report r = run_os("import os as o\no.system('x')\n");
    expect_count(&r, 1);
    expect_at(&r, 0, "attr-denied", 2, 1);
    assert_string_equal(r.items[0].message, "use of o.system (os.system) is not allowed");
    val_report_free(&r);
}

static void test_alias_bound_after_use(void **state) {
    (void)state;
    /* The function body runs after the import, so the alias applies to it. */
    val_report r = run_os("def run():\n    return sh.popen('id')\nimport os as sh\nrun()\n");
    expect_count(&r, 1);
    expect_at(&r, 0, "attr-denied", 2, 12);
    val_report_free(&r);
}

static void test_from_os_import_system(void **state) {
    (void)state;
    val_report r = run_os("from os import path, system\n");
    expect_count(&r, 1);
    expect_at(&r, 0, "attr-denied", 1, 22);
    assert_string_equal(r.items[0].message, "import of os.system is not allowed");
    val_report_free(&r);
}

static void test_os_exec_spawn_family(void **state) {
    (void)state;
    val_report r = run_os("import os, posix\nos.execvp('sh', ['sh'])\nos.spawnl(0, 'x')\n"
                       "posix.system('y')\n"
                       "from os import *\nf = os.popen\n");
    expect_count(&r, 6);
    expect_at(&r, 0, "attr-denied", 2, 1);
    expect_at(&r, 1, "attr-denied", 3, 1);
    expect_at(&r, 2, "attr-denied", 4, 1);
    expect_at(&r, 3, "attr-denied", 5, 16);
    /* os also hands out modules off the list (os.sys, os.abc): the star import is refused. */
    expect_at(&r, 4, "import-star", 5, 16);
    expect_at(&r, 5, "attr-denied", 6, 5);
    val_report_free(&r);
}

/* ---- ordering and lifecycle ---- */

static void test_all_findings_in_source_order(void **state) {
    (void)state;
    /* Found in three different passes (import rule, call rule, post-walk alias rule). */
    val_report r = run_os("def g():\n    o.system('a')\n"
                       "import subprocess, os as o\n"
                       "exec('1'); eval('2')\n"
                       "x = 1 # open(\n"
                       "from shutil import copy\n");
    expect_count(&r, 5);
    expect_at(&r, 0, "attr-denied", 2, 5);
    expect_at(&r, 1, "import-denied", 3, 8);
    expect_at(&r, 2, "call-denied", 4, 1);
    assert_string_equal(r.items[2].message, "call to exec() is not allowed");
    expect_at(&r, 3, "call-denied", 4, 12);
    assert_string_equal(r.items[3].message, "call to eval() is not allowed");
    expect_at(&r, 4, "import-denied", 6, 1);
    val_report_free(&r);
}

static void test_reinit_and_repeated_checks(void **state) {
    (void)state;
    char err[256] = "";
    assert_int_equal(val_init(err, sizeof err), 0);
    for (int i = 0; i < 200; i++) {
        val_report r = run(i % 2 ? "exec('1')\n" : "x = (\n");
        expect_count(&r, 1);
        assert_string_equal(r.items[0].rule, i % 2 ? "call-denied" : "syntax");
        val_report_free(&r);
        assert_null(r.items);
        assert_int_equal(r.count, 0);
    }
}

static void test_bad_arguments(void **state) {
    (void)state;
    char err[256] = "";
    val_report r = {0};
    assert_int_equal(val_check(NULL, 3, &r, err, sizeof err), -1);
    assert_non_null(strstr(err, "codeq: validator: "));
    assert_int_equal(val_check("x", 1, NULL, err, sizeof err), -1);
    val_report_free(NULL);
}

static void test_utf8_trim(void **state) {
    (void)state;
    char a[] = "caf\xc3\xa9";
    val_utf8_trim(a);
    assert_string_equal(a, "caf\xc3\xa9");
    char b[] = "caf\xc3";
    val_utf8_trim(b);
    assert_string_equal(b, "caf");
    char c[] = "x\xe2\x82";
    val_utf8_trim(c);
    assert_string_equal(c, "x");
    char d[] = "\xf0\x9f\x98\x80";
    val_utf8_trim(d);
    assert_string_equal(d, "\xf0\x9f\x98\x80");
}

static void test_long_message_cut_on_char_boundary(void **state) {
    (void)state;
    /* A module name of 300 two-byte characters: the message must stay valid UTF-8. */
    char src[1024] = "from ";
    for (int i = 0; i < 300; i++) strcat(src, "\xc3\xa9");
    strcat(src, " import system\n");
    val_report r = run(src);
    expect_count(&r, 1); /* not os, but not on the allowlist either */
    assert_string_equal(r.items[0].rule, "import-denied");
    val_report_free(&r);

    char src2[1024] = "import os as ";
    for (int i = 0; i < 200; i++) strcat(src2, "\xc3\xa9");
    strcat(src2, "\n");
    for (int i = 0; i < 200; i++) strcat(src2, "\xc3\xa9");
    strcat(src2, ".system('x')\n");
    r = run_os(src2);
    expect_count(&r, 1);
    const char *m = r.items[0].message;
    size_t n = strlen(m);
    assert_true(n < sizeof r.items[0].message);
    /* Last character complete: the string ends with a whole "é" or an ASCII byte. */
    assert_true((unsigned char)m[n - 1] < 0x80 ||
                ((unsigned char)m[n - 2] == 0xc3 && (unsigned char)m[n - 1] == 0xa9));
    val_report_free(&r);
}

static int setup(void **state) {
    (void)state;
    char err[256] = "";
    if (val_init(err, sizeof err) != 0) {
        fprintf(stderr, "%s\n", err);
        return -1;
    }
    with_os = val_policy_parse(with_os_json, strlen(with_os_json), "test", err, sizeof err);
    if (!with_os) {
        fprintf(stderr, "%s\n", err);
        return -1;
    }
    return 0;
}

static int teardown(void **state) {
    (void)state;
    val_policy_free(with_os);
    val_shutdown();
    char err[256] = "";
    /* After shutdown the interpreter cannot come back, and says so instead of crashing. */
    if (val_init(err, sizeof err) != -1 || !strstr(err, "finalized")) return -1;
    return 0;
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_clean_program),
        cmocka_unit_test(test_empty_program),
        cmocka_unit_test(test_comments_and_strings_mentioning_calls),
        cmocka_unit_test(test_main_guard_class_fstrings),
        cmocka_unit_test(test_harmless_names_that_look_close),
        cmocka_unit_test(test_typical_100_line_program),
        cmocka_unit_test(test_syntax_error_position),
        cmocka_unit_test(test_indentation_error_is_syntax),
        cmocka_unit_test(test_nul_byte_is_syntax_not_crash),
        cmocka_unit_test(test_invalid_utf8_is_syntax),
        cmocka_unit_test(test_latin1_coding_cookie),
        cmocka_unit_test(test_utf8_bom),
        cmocka_unit_test(test_deep_parentheses),
        cmocka_unit_test(test_deep_unary_chain),
        cmocka_unit_test(test_deep_operator_chain_is_too_deep),
        cmocka_unit_test(test_parser_warnings_stay_quiet),
        cmocka_unit_test(test_exec_on_line_3),
        cmocka_unit_test(test_dunder_import),
        cmocka_unit_test(test_nested_and_other_builtins),
        cmocka_unit_test(test_exec_as_decorator),
        cmocka_unit_test(test_import_subprocess),
        cmocka_unit_test(test_from_shutil_import),
        cmocka_unit_test(test_import_submodule_and_list),
        cmocka_unit_test(test_os_system),
        cmocka_unit_test(test_os_alias_system),
        cmocka_unit_test(test_alias_bound_after_use),
        cmocka_unit_test(test_from_os_import_system),
        cmocka_unit_test(test_os_exec_spawn_family),
        cmocka_unit_test(test_all_findings_in_source_order),
        cmocka_unit_test(test_reinit_and_repeated_checks),
        cmocka_unit_test(test_bad_arguments),
        cmocka_unit_test(test_utf8_trim),
        cmocka_unit_test(test_long_message_cut_on_char_boundary),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
