/* test_validator_rules: each policy rule of the validator on real CPython parses, with the
 * positions of its findings, the legitimate code it must leave alone, and policy loading.
 *
 * Columns are 1-based UTF-8 byte columns (col_offset + 1). One interpreter for the group.
 */
#include "val_internal.h" /* first: it includes Python.h, which wants to precede libc headers */

#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "validator.h"

static val_policy *data_policy;

static val_report check_with(const val_policy *p, const char *src) {
    val_report r = {0};
    char err[512] = "";
    if (val_check_policy(p, src, strlen(src), &r, err, sizeof err) != 0)
        fail_msg("val_check_policy failed: %s", err);
    return r;
}

static void print_report(const val_report *r) {
    for (size_t i = 0; i < r->count; i++)
        print_message("  %s %d:%d-%d:%d %s\n", r->items[i].rule, r->items[i].line,
                      r->items[i].col, r->items[i].end_line, r->items[i].end_col,
                      r->items[i].message);
}

/* Expects exactly the findings given as "rule@line:col" strings, in order. */
static void expect_p(const val_policy *p, const char *src, int n, ...) {
    val_report r = check_with(p, src);
    if (r.count != (size_t)n) {
        print_message("source:\n%s\n", src);
        print_report(&r);
    }
    assert_int_equal(r.count, n);
    va_list ap;
    va_start(ap, n);
    for (int i = 0; i < n; i++) {
        const char *want = va_arg(ap, const char *);
        char got[80];
        snprintf(got, sizeof got, "%s@%d:%d", r.items[i].rule, r.items[i].line, r.items[i].col);
        if (strcmp(got, want) != 0) print_report(&r);
        assert_string_equal(got, want);
        assert_string_equal(r.items[i].severity, "error");
        assert_true(r.items[i].end_line >= r.items[i].line);
        assert_true(r.items[i].message[0] != '\0');
    }
    va_end(ap);
    val_report_free(&r);
}

#define expect(src, ...) expect_p(NULL, src, __VA_ARGS__)
#define clean(src) expect_p(NULL, src, 0)

static const char *message_of(const char *src, size_t i) {
    static char msg[sizeof ((val_finding *)0)->message];
    val_report r = check_with(NULL, src);
    assert_true(i < r.count);
    snprintf(msg, sizeof msg, "%s", r.items[i].message);
    val_report_free(&r);
    return msg;
}

/* ---- imports ---------------------------------------------------------------------------- */

static void test_import_allowlist(void **state) {
    (void)state;
    expect("import math, os\nfrom importlib import import_module\n", 2, "import-denied@1:14",
           "import-denied@2:1");
    assert_string_equal(message_of("import os\n", 0),
                        "import of module 'os' is not allowed by policy strict");
    clean("from __future__ import annotations\nimport collections.abc\n"
          "from collections.abc import Mapping\nimport json.decoder as jd\n"
          "from dataclasses import dataclass, field\nimport re, random, statistics\n");
}

static void test_import_relative_and_star(void **state) {
    (void)state;
    expect("x = 1\nfrom . import helper\nfrom ..pkg import *\n", 2, "import-relative@2:1",
           "import-relative@3:1");
    /* queue hands out threading; sys is attribute-restricted; math has nothing to hide. */
    expect("from queue import *\nfrom sys import *\nfrom math import *\n", 2,
           "import-star@1:19", "import-star@2:17");
}

/* ---- modules ---------------------------------------------------------------------------- */

static void test_module_private(void **state) {
    (void)state;
    expect("import random\nx = random._os\nfrom random import _inst\n", 2,
           "module-private@2:5", "module-private@3:20");
    assert_string_equal(message_of("import random as r\nr._os.system('id')\n", 0),
                        "random._os is a private attribute of a module and is not allowed");
    /* Private names of the program's own objects are its business. */
    clean("import random\nclass C:\n    def __init__(self):\n        self._x = random.random()\n"
          "        self.__y = 2\n    def get(self):\n        return self._x + self.__y\n"
          "print(C().get() > 0, random.Random(4)._randbelow(3) >= 0)\n");
}

static void test_module_escape(void **state) {
    (void)state;
    expect("import queue\nt = queue.threading\nqueue.threading._os.system('x')\n", 2,
           "module-escape@2:5", "module-escape@3:1");
    assert_string_equal(message_of("import queue\nqueue.threading\n", 0),
                        "queue.threading is module 'threading', which policy strict does not "
                        "allow");
    /* Through an allowed submodule to another allowed module is fine. */
    clean("import json\nprint(json.decoder.JSONDecodeError, json.decoder.re.compile('x'))\n");
    /* An alias bound after the use still counts (the function runs after the import). */
    expect("def f():\n    return q.threading\nimport queue as q\n", 1, "module-escape@2:12");
}

static void test_module_attr_restricted(void **state) {
    (void)state;
    expect("import sys\nm = sys.modules['os']\nf = sys._getframe()\nfrom sys import modules, argv\n",
           3, "module-attr-denied@2:5", "module-private@3:5", "module-attr-denied@4:17");
    /* denied_attributes: typing evaluates strings as code, string.Formatter traverses. */
    expect("import typing, string\nh = typing.get_type_hints(f)\n"
           "from typing import ForwardRef, List\ns = string.Formatter()\n", 3,
           "module-attr-denied@2:5", "module-attr-denied@3:20", "module-attr-denied@4:5");
    assert_string_equal(message_of("import typing\ntyping.get_type_hints\n", 0),
                        "typing.get_type_hints is denied by policy strict");
    clean("import sys\ndata = sys.stdin.read()\nsys.stdout.write(data)\nprint(sys.argv, "
          "sys.maxsize, sys.version_info >= (3, 8))\nsys.setrecursionlimit(5000)\nsys.exit(0)\n");
    clean("import io\nbuf = io.StringIO()\nbuf.write('x')\nprint(buf.getvalue())\n");
    expect("import io\nf = io.open('/etc/passwd')\n", 1, "module-attr-denied@2:5");
}

/* ---- builtins --------------------------------------------------------------------------- */

static void test_dangerous_builtin_calls(void **state) {
    (void)state;
    expect("g = globals()\nv = vars(x)\nl = locals()\nhelp(str)\nopen('f')\n", 5,
           "call-denied@1:5", "call-denied@2:5", "call-denied@3:5", "call-denied@4:1",
           "call-denied@5:1");
    /* input() is allowed by both profiles; open() only by data. */
    clean("name = input()\nprint(name)\n");
    expect_p(data_policy, "with open('data.csv') as f:\n    print(f.read())\n", 0);
    expect_p(data_policy, "exec('1')\n", 1, "call-denied@1:1");
}

static void test_builtin_references(void **state) {
    (void)state;
    expect("f = exec\nlist(map(getattr, [m], ['sys']))\n", 2, "builtin-ref@1:5",
           "builtin-ref@2:10");
    expect("import functools\ng = functools.partial(getattr, m)\n", 1, "builtin-ref@2:23");
    assert_string_equal(message_of("f = eval\n", 0),
                        "eval used as a value is not allowed (it could be called indirectly)");
    /* Being called is call-denied, once, not also builtin-ref. */
    expect("exec('x')\n", 1, "call-denied@1:1");
}

static void test_getattr_family(void **state) {
    (void)state;
    expect("getattr(x, name)\nsetattr(x, 'a' + 'b', 1)\nhasattr(x)\n", 3,
           "getattr-dynamic@1:1", "getattr-dynamic@2:1", "getattr-dynamic@3:1");
    expect("getattr(x, '__class__')\ndelattr(x, '_cache')\ngetattr(x, 'gi_frame')\n", 3,
           "dunder-attr@1:12", "getattr-private@2:12", "introspection-attr@3:12");
    expect("import random\ngetattr(random, '_os')\nimport queue\ngetattr(queue, 'threading')\n",
           3, "getattr-private@2:17", "module-private@2:17", "module-escape@4:16");
    /* The attack from the reference list: two findings, the dunder name and the computed name. */
    expect("getattr(__builtins__, 'ev' + 'al')('1')\n", 2, "getattr-dynamic@1:1",
           "dunder-name@1:9");
    clean("class P:\n    x = 1\nprint(getattr(P(), 'x'), getattr(P, 'y', None), hasattr(P, 'x'))\n"
          "setattr(P, 'z', 3)\n");
}

static void test_attrgetter_methodcaller(void **state) {
    (void)state;
    expect("import operator\nf = operator.attrgetter('a.__class__', 'b')\n"
           "g = operator.methodcaller('__reduce__')\nh = operator.attrgetter(n)\n",
           3, "dunder-attr@2:25", "dunder-attr@3:27", "getattr-dynamic@4:5");
    clean("from operator import attrgetter, itemgetter\nrows = sorted([], key=attrgetter('name'))\n"
          "k = itemgetter(0)\n");
    /* Used as a value or imported under another name, later calls escape the name check. */
    expect("import operator\nag = operator.attrgetter\nf = map(operator.methodcaller, n)\n"
           "from operator import attrgetter as g, methodcaller\nm = [methodcaller]\n",
           4, "builtin-ref@2:6", "builtin-ref@3:9", "builtin-ref@4:22", "builtin-ref@5:6");
}

/* ---- introspection ---------------------------------------------------------------------- */

static void test_dunder_attributes(void **state) {
    (void)state;
    /* Subclass walking: each step is a finding at the start of its expression. */
    expect("x = ().__class__.__base__.__subclasses__()\n", 3, "dunder-attr@1:5",
           "dunder-attr@1:5", "dunder-attr@1:5");
    expect("f.__globals__['os']\n(lambda: 0).__code__\nabs.__self__\nx.__dict__\n", 4,
           "dunder-attr@1:1", "dunder-attr@2:1", "dunder-attr@3:1", "dunder-attr@4:1");
    expect("o.__getattribute__('x')\nc.__init_subclass__\nr = o.__reduce_ex__(2)\nm.__loader__\n",
           4, "dunder-attr@1:1", "dunder-attr@2:1", "dunder-attr@3:5", "dunder-attr@4:1");
    assert_string_equal(message_of("x.__mro__\n", 0),
                        "attribute __mro__ is not allowed: it reaches interpreter internals");
}

static void test_dunder_legitimate_uses(void **state) {
    (void)state;
    clean("from dataclasses import dataclass\n"
          "@dataclass\nclass Point:\n    x: int\n    y: int = 0\n"
          "class Vec:\n"
          "    __slots__ = ('a',)\n"
          "    def __init__(self, a):\n        super().__init__()\n        self.a = a\n"
          "    def __repr__(self):\n        return f'{self.__class__.__name__}({self.a!r})'\n"
          "    def __eq__(self, other):\n        return type(other).__qualname__ == 'Vec'\n"
          "    def __len__(self):\n        return 1\n"
          "    def __add__(self, o):\n        return Vec(self.a.__add__(o.a))\n"
          "try:\n    1 / 0\nexcept ZeroDivisionError as e:\n"
          "    print(f'{type(e).__name__}: {e}', Vec.__doc__, Vec.__module__, e.__cause__,\n"
          "          e.__context__)\n"
          "match Point(1, 2):\n    case Point(x=1, y=y):\n        print(y)\n    case _:\n        pass\n"
          "if __name__ == '__main__':\n    print(len(Vec(1)), Point.__name__)\n");
}

static void test_dunder_names(void **state) {
    (void)state;
    expect("b = __builtins__\n__loader__.load_module('os')\nx = __spec__\n", 3,
           "dunder-name@1:5", "dunder-name@2:1", "dunder-name@3:5");
    clean("print(__name__, __doc__, __file__, __debug__)\n");
}

static void test_introspection_attributes(void **state) {
    (void)state;
    expect("g = (x for x in ()).gi_frame.f_globals\n", 2, "introspection-attr@1:5",
           "introspection-attr@1:5");
    expect("try:\n    1/0\nexcept Exception as e:\n    f = e.__traceback__.tb_frame.f_back\n",
           3, "dunder-attr@4:9", "introspection-attr@4:9", "introspection-attr@4:9");
    expect("async def f():\n    pass\nc = f()\nc.cr_frame\n", 1, "introspection-attr@4:1");
}

static void test_private_mangled(void **state) {
    (void)state;
    expect("license._Printer__filenames = ['/etc/passwd']\n", 2, "builtin-ref@1:1",
           "private-attr@1:1");
    clean("class A:\n    def __init__(self):\n        self.__secret = 1\n"
          "    def peek(self):\n        return self.__secret\nprint(A().peek())\n");
}

/* ---- format ----------------------------------------------------------------------------- */

static void test_str_format(void **state) {
    (void)state;
    expect("s = '{0.__class__.__init__.__globals__}'.format(x)\nt = '{0[k].real}'.format(d)\n"
           "u = '{:>{w.real}}'.format(x, w=3)\nv = '{a.b}'.format_map(m)\n",
           4, "format-attr@1:5", "format-attr@2:5", "format-attr@3:5", "format-attr@4:5");
    /* Indexes are item lookups with literal keys, even when the key has dots or dunders. */
    clean("print('{0[0]}-{0[1]} {1[a.b]} {1[__class__]}'.format('xy', {'a.b': 1, '__class__': 2}))\n");
    expect("fmt = input()\nprint(fmt.format(x))\nprint(str.format('{0}', 1))\n", 2,
           "format-dynamic@2:7", "format-dynamic@3:7");
    clean("print('{} {:>5} {name!r:^10} {{0.x}} {0:{1}}'.format(1, 2, 3, name='n'))\n");
    /* The bound method taken away to be called later, directly or through methodcaller. */
    expect("f = '{0.__class__}'.format\nimport operator\ng = operator.methodcaller('format', x)\n",
           2, "format-dynamic@1:5", "format-dynamic@3:27");
}

/* ---- where names hide ------------------------------------------------------------------- */

static void test_hiding_places(void **state) {
    (void)state;
    /* lambda defaults, decorators, f-strings, nested format specs, comprehension targets */
    expect("f = lambda x=__import__('os'): 0\n", 1, "call-denied@1:14");
    expect("@exec\n@input\nclass C: pass\n", 1, "call-denied@1:2");
    expect("s = f\"{__import__('os').system('id')}\"\n", 1, "call-denied@1:8");
    expect("s = f'{x:{y.__class__}}'\n", 1, "dunder-attr@1:11");
    expect("r = [[None for _.__class_getitem__ in [exec]], _['x']]\n", 2, "dunder-attr@1:16",
           "builtin-ref@1:40");
    /* NFKC: the parser normalizes identifiers, so fullwidth letters are plain exec. */
    expect("\xef\xbd\x85\xef\xbd\x98\xef\xbd\x85\xef\xbd\x83('1')\n", 1, "call-denied@1:1");
    expect("breakpoint()\n", 1, "call-denied@1:1");
    /* Keyword names of a class pattern are attributes read from the subject. */
    expect("match v:\n    case object(__init__=object(__globals__=g)):\n        pass\n", 1,
           "dunder-attr@2:45"); /* __init__ is harmless; __globals__ is not */
    clean("match p:\n    case Point(x=0, y=yy):\n        print(yy)\n");
    /* Positional sub-patterns read the attributes __match_args__ names at run time. */
    expect("match v:\n    case C(D(g)):\n        pass\n    case int(n):\n        pass\n", 3,
           "match-positional@2:12", "match-positional@2:14", "match-positional@4:14");
    clean("match v:\n    case str() | int():\n        pass\n");
}

/* ---- limits and policies ---------------------------------------------------------------- */

static val_policy *policy_from(const char *json) {
    char err[256] = "";
    val_policy *p = val_policy_parse(json, strlen(json), "test", err, sizeof err);
    if (!p) fail_msg("policy: %s", err);
    return p;
}

static void test_limits(void **state) {
    (void)state;
    val_policy *p = policy_from("{\"name\": \"tiny\", \"modules\": [\"math\"], \"limits\": "
                                "{\"max_source_bytes\": 12, \"max_nodes\": 9, \"max_depth\": 3}}");
    expect_p(p, "print('this is more than 12 bytes')\n", 1, "limit-bytes@1:1");
    expect_p(p, "a;b;c;d;e\n", 1, "limit-nodes@1:5");
    expect_p(p, "x=-(-1)\n", 1, "too-deep@1:5");
    expect_p(p, "x = 1\n", 0);
    val_policy_free(p);
}

static void test_disabled_rules(void **state) {
    (void)state;
    val_policy *p = policy_from("{\"name\": \"guard-only\", \"modules\": [\"math\"], "
                                "\"disabled_rules\": [\"call-denied\", \"import-denied\"]}");
    expect_p(p, "import os\nexec('1')\nx = (\n", 1, "syntax@3:5");
    expect_p(p, "import os\nexec('1')\nf = eval\n", 1, "builtin-ref@3:5");
    val_policy_free(p);
}

static void test_policy_errors(void **state) {
    (void)state;
    const char *bad[][2] = {
        {"{\"name\": \"x\", \"modules\": [], \"extra\": 1}", "unknown key 'extra'"},
        {"{\"name\": \"x\", \"modules\": [\"os; import\"]}", "not a Python name"},
        {"{\"name\": \"x\"}", "modules is required"},
        {"{\"name\": \"x\", \"modules\": [], \"disabled_rules\": [\"syntax\"]}", "syntax"},
        {"{\"name\": \"x\", \"modules\": [], \"disabled_rules\": [\"dunder-atr\"]}",
         "disabled_rules: 'dunder-atr' is not a rule id"},
        {"{\"name\": \"x\", \"modules\": [], \"files\": \"all\"}", "files must be"},
        {"{\"name\": \"x\", \"modules\": [], \"limits\": {\"max_nodes\": 0}}", "max_nodes"},
        {"{\"name\": \"x\", \"modules\": [], \"name\": \"y\"}", "duplicate"},
        {"[1]", "must be a JSON object"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char err[256] = "";
        val_policy *p = val_policy_parse(bad[i][0], strlen(bad[i][0]), "t.json", err, sizeof err);
        if (p || !strstr(err, bad[i][1])) print_message("%s -> %s\n", bad[i][0], err);
        assert_null(p);
        assert_non_null(strstr(err, "codeq: validator: policy t.json"));
        assert_non_null(strstr(err, bad[i][1]));
    }
    char err[256] = "";
    assert_null(val_policy_load("/nonexistent/policy.json", err, sizeof err));
    assert_non_null(strstr(err, "No such file"));
}

/* The rule ids one source file reports (each `val_add(c, "ID"` and `val_add_at(c, "ID"`), each
 * checked to be in val_rule_ids; returns how many calls it found. */
static int rule_ids_of(const char *path) {
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char line[1024];
    int found = 0;
    while (fgets(line, sizeof line, f)) {
        for (const char *at = line; (at = strstr(at, "val_add")) != NULL; at++) {
            const char *q = strstr(at, "(c, \"");
            if (!q || q - at > 10) continue; /* "val_add_at" */
            char id[64];
            if (sscanf(q + 5, "%63[a-z-]", id) != 1) continue;
            size_t k = 0;
            while (val_rule_ids[k] && strcmp(val_rule_ids[k], id) != 0) k++;
            if (!val_rule_ids[k]) print_message("%s: rule id %s is not in val_rule_ids\n", path, id);
            assert_non_null(val_rule_ids[k]);
            found++;
        }
    }
    fclose(f);
    return found;
}

/* val_rule_ids, which a policy's disabled_rules is checked against, names every rule id the
 * validator's sources report: every .c file in validator/, so a new rule file is read too. */
static void test_rule_ids_complete(void **state) {
    (void)state;
    const char *root = getenv("CODEQ_SOURCE_DIR");
    assert_non_null(root);
    char dir[512];
    snprintf(dir, sizeof dir, "%s/validator", root);
    DIR *d = opendir(dir);
    assert_non_null(d);
    int found = 0;
    for (struct dirent *e; (e = readdir(d));) {
        size_t nl = strlen(e->d_name);
        if (nl < 3 || strcmp(e->d_name + nl - 2, ".c") != 0) continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        found += rule_ids_of(path);
    }
    closedir(d);
    assert_true(found >= 22); /* the scan found the calls at all */
}

static void test_profiles_match_files(void **state) {
    (void)state;
    /* The binary embeds policies/strict.json and data.json verbatim: byte-equal to the files in the tree. */
    const char *dir = getenv("CODEQ_SOURCE_DIR");
    assert_non_null(dir);
    const char *names[] = {"strict", "data"};
    for (size_t i = 0; i < 2; i++) {
        char path[512], buf[65536];
        snprintf(path, sizeof path, "%s/policies/%s.json", dir, names[i]);
        FILE *f = fopen(path, "rb");
        assert_non_null(f);
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[n] = '\0';
        assert_string_equal(val_profile_json(names[i]), buf);
        char err[256] = "";
        val_policy *p = val_policy_load(names[i], err, sizeof err);
        assert_non_null(p);
        assert_string_equal(val_policy_name(p), names[i]);
        val_policy_free(p);
    }
    assert_null(val_profile_json("lenient"));
    assert_string_equal(val_policy_name(val_policy_default()), "strict");
}

static void test_guard_source(void **state) {
    (void)state;
    size_t len;
    const char *g = val_policy_guard(val_policy_default(), &len);
    assert_non_null(g);
    assert_int_equal(strlen(g), len);
    assert_true(strncmp(g, "_CODEQ_POLICY = {\"name\": \"strict\", \"files\": \"none\"", 50) == 0);
    assert_non_null(strstr(g, "\"modules\": [\"__future__\", \"abc\""));
    assert_non_null(strstr(g, "\"sys\": [\"argv\""));
    assert_non_null(strstr(g, "def _codeq_prepare(policy):"));
    /* It is Python the embedded interpreter compiles (run only inside the sandbox). */
    PyGILState_STATE gs = PyGILState_Ensure();
    PyObject *code = Py_CompileString(g, "_codeq_prelude.py", Py_file_input);
    if (!code) PyErr_Print();
    assert_non_null(code);
    Py_XDECREF(code);
    PyGILState_Release(gs);
    val_policy *p = policy_from("{\"name\": \"off\", \"modules\": [], \"runtime_guard\": false}");
    assert_null(val_policy_guard(p, &len));
    assert_int_equal(len, 0);
    val_policy_free(p);
    g = val_policy_guard(data_policy, &len);
    assert_non_null(strstr(g, "\"files\": \"workdir\""));
}

static void test_verdict_cache(void **state) {
    (void)state;
    /* The same bytes under two policies: each gets its own verdict, however often asked. */
    for (int i = 0; i < 3; i++) {
        expect("with open('f') as fh:\n    print(fh.read())\n", 1, "call-denied@1:6");
        expect_p(data_policy, "with open('f') as fh:\n    print(fh.read())\n", 0);
    }
    /* A policy loaded later at a reused address is still a different key. */
    for (int i = 0; i < 3; i++) {
        val_policy *p = policy_from(i % 2 ? "{\"name\": \"a\", \"modules\": [\"os\"]}"
                                          : "{\"name\": \"b\", \"modules\": [\"math\"]}");
        expect_p(p, "import os\n", i % 2 ? 0 : 1, "import-denied@1:8");
        val_policy_free(p);
    }
    val_cache_enable(0);
    expect("import os\n", 1, "import-denied@1:8");
    val_cache_enable(1);
    expect("import os\n", 1, "import-denied@1:8");
}

static int setup(void **state) {
    (void)state;
    char err[256] = "";
    if (val_init(err, sizeof err) != 0 || !(data_policy = val_policy_load("data", err, sizeof err))) {
        fprintf(stderr, "%s\n", err);
        return -1;
    }
    return 0;
}

static int teardown(void **state) {
    (void)state;
    val_policy_free(data_policy);
    val_shutdown();
    return 0;
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_import_allowlist),
        cmocka_unit_test(test_import_relative_and_star),
        cmocka_unit_test(test_module_private),
        cmocka_unit_test(test_module_escape),
        cmocka_unit_test(test_module_attr_restricted),
        cmocka_unit_test(test_dangerous_builtin_calls),
        cmocka_unit_test(test_builtin_references),
        cmocka_unit_test(test_getattr_family),
        cmocka_unit_test(test_attrgetter_methodcaller),
        cmocka_unit_test(test_dunder_attributes),
        cmocka_unit_test(test_dunder_legitimate_uses),
        cmocka_unit_test(test_dunder_names),
        cmocka_unit_test(test_introspection_attributes),
        cmocka_unit_test(test_private_mangled),
        cmocka_unit_test(test_str_format),
        cmocka_unit_test(test_hiding_places),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_disabled_rules),
        cmocka_unit_test(test_rule_ids_complete),
        cmocka_unit_test(test_policy_errors),
        cmocka_unit_test(test_profiles_match_files),
        cmocka_unit_test(test_guard_source),
        cmocka_unit_test(test_verdict_cache),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
