/* codeq run: one program through exactly the worker's path (the same job JSON, decode,
 * validate, sandbox), without Kafka. --json prints the very result message a worker would
 * publish; the exit status is 0 only for `ok`. */
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "wrk_internal.h"

static const char run_help[] =
    "usage: codeq run [OPTIONS] FILE.py|-\n\n"
    "Run one program locally through the worker's validate + sandbox path.\n\n"
    "  --json               print the result message the worker would publish\n"
    "  --audit              print {\"result\":..., \"audit\":[...]} as JSON (implies --json)\n"
    "  --stdin FILE         feed FILE to the program's standard input\n"
    "  --input NAME=FILE    put FILE into the job's working directory as NAME (repeatable)\n"
    "  --id ID              job id (default: local-<file name>, local-stdin for -)\n"
    "  --wall-ms N          wall-clock limit (default 5000)\n"
    "  --cpu-ms N           CPU-time limit (default 5000)\n"
    "  --memory-mb N        memory limit (default 50)\n"
    "  --output-bytes N     cap per output stream (default 65536)\n"
    "  --io-read-bps N      bytes/s read from the host's disks (default 52428800);\n"
    "                       also --io-write-bps, --io-read-iops, --io-write-iops\n"
    "  --python PATH        interpreter to run in exec mode (default /usr/bin/python3); a\n"
    "                       zygote runs the libpython codeq is built with (3.11) and only\n"
    "                       reports PATH as sys.executable; a guarded job in exec mode\n"
    "                       needs that version too (_codeq_seal.so)\n"
    "  --policy FILE|NAME   validator policy file or profile: strict (default), data\n"
    "  --sandbox-profile P  sandbox profile: full (default), or on purpose a weaker\n"
    "                       no-cgroup or no-seccomp (stated in the result)\n"
    "  --isolation M        zygote (default): forked from a warm interpreter, no execve\n"
    "                       (docs/zygote.md); exec: a fresh interpreter per job\n"
    "  --zygote-preload L   zygote mode: modules (comma-separated) the zygote imports\n"
    "                       once (default: every installed module the policy allows)\n"
    "  --zygote-start-ms N  zygote mode: longest its start may take (default 10000; a\n"
    "                       slow host, or emulation, needs more)\n"
    "  -h, --help           this help\n\n"
    "Without --json on a terminal, control characters of the job's output and messages\n"
    "are shown escaped (\\x1b); into a pipe or file they are written unchanged.\n\n"
    "Exit status: 0 for status ok, 1 for any other status, 2 for usage errors.\n";

static json_t *build_job(const char *id, const char *code, size_t len, const char *in,
                         size_t inlen, json_t *limits)
{
    json_t *jid = cli_json_text("run", "the job id", id, strlen(id));
    json_t *c = jid ? cli_json_text("run", "the program", code, len) : NULL;
    json_t *s = c && in ? cli_json_text("run", "stdin", in, inlen) : NULL;
    if (!c || (in && !s)) {
        json_decref(jid);
        json_decref(c);
        return NULL;
    }
    json_t *job = json_pack("{s:o, s:o}", "id", jid, "code", c);
    if (s) json_object_set_new(job, "stdin", s);
    if (json_object_size(limits)) json_object_set(job, "limits", limits);
    return job;
}

/* Prints text the job controls, all of the JSON string (a job's output may hold NUL
 * characters). On a terminal its control characters are shown escaped (\x1b, \u009b) instead
 * of written: escape sequences could retitle or clear the terminal, move the cursor over
 * codeq's own lines, or on some terminals answer with input (issue 11). Newline and tab stay
 * as they are; into a pipe or a file the text goes unchanged. */
static void put_job_text(const json_t *str, bool tty)
{
    const unsigned char *c = (const unsigned char *)json_string_value(str);
    size_t n = json_string_length(str);
    if (!c)
        return;
    if (!tty) {
        fwrite(c, 1, n, stdout);
        return;
    }
    char buf[4096];
    for (size_t k; n > 0; c += k, n -= k) {
        k = wrk_escape((const char *)c, n, true, buf, sizeof buf);
        fputs(buf, stdout);
    }
}

static void print_human(const json_t *r)
{
    bool tty = isatty(STDOUT_FILENO);
    const json_t *u = json_object_get(r, "usage");
    printf("status: %s", json_string_value(json_object_get(r, "status")));
    if (json_is_integer(json_object_get(r, "exit_code")))
        printf(" (exit %lld)", json_integer_value(json_object_get(r, "exit_code")));
    if (json_is_string(json_object_get(r, "signal")))
        printf(" (%s)", json_string_value(json_object_get(r, "signal")));
    if (json_is_object(u)) /* null for a job that never ran: no zeros that look measured */
        printf(" wall %lld ms, cpu %lld ms, max rss %lld kB",
               json_integer_value(json_object_get(u, "wall_ms")),
               json_integer_value(json_object_get(u, "cpu_ms")),
               json_integer_value(json_object_get(u, "max_rss_kb")));
    printf("\n");
    const json_t *msg = json_object_get(r, "message");
    if (json_string_length(msg)) {
        printf("message: ");
        put_job_text(msg, tty);
        printf("\n");
    }
    size_t i;
    json_t *f;
    json_array_foreach(json_object_get(r, "findings"), i, f) {
        printf("line %lld col %lld: %s ", json_integer_value(json_object_get(f, "line")),
               json_integer_value(json_object_get(f, "col")),
               json_string_value(json_object_get(f, "rule")));
        put_job_text(json_object_get(f, "message"), tty);
        printf("\n");
    }
    static const char *const streams[] = {"stdout", "stderr"};
    bool open_line = false; /* output without a final newline: the next header starts a line */
    for (int k = 0; k < 2; k++) {
        const json_t *text = json_object_get(r, streams[k]);
        char key[32];
        snprintf(key, sizeof key, "%s_truncated", streams[k]);
        size_t n = json_string_length(text);
        if (!n)
            continue;
        printf("%s--- %s%s ---\n", open_line ? "\n" : "", streams[k],
               json_is_true(json_object_get(r, key)) ? " (truncated)" : "");
        put_job_text(text, tty);
        open_line = json_string_value(text)[n - 1] != '\n';
    }
    /* the files the program left: named here, their content with --json */
    const json_t *arts = json_object_get(r, "artifacts");
    bool cut = json_is_true(json_object_get(r, "artifacts_truncated"));
    if (json_array_size(arts))
        printf("%s--- artifacts%s (contents with --json) ---\n", open_line ? "\n" : "",
               cut ? " (some left out)" : "");
    else if (cut) /* a header with nothing under it said nothing */
        printf("%s--- artifacts: none kept, the files left are over limits.artifact_files or "
               "artifact_bytes ---\n", open_line ? "\n" : "");
    json_array_foreach(arts, i, f) {
        long long bytes = json_integer_value(json_object_get(f, "bytes"));
        put_job_text(json_object_get(f, "path"), tty);
        printf(" (%lld byte%s)\n", bytes, bytes == 1 ? "" : "s");
    }
}

/* --input NAME=LOCAL: LOCAL's bytes become /work/NAME (exact, as base64). */
static int input_opt(json_t *files, char *arg)
{
    char *eq = strchr(arg, '=');
    size_t len;
    if (!eq || eq == arg) {
        fprintf(stderr, "codeq: run: --input expects NAME=LOCALFILE, got '%s'\n", arg);
        return -1;
    }
    *eq = '\0';
    json_t *path = cli_json_text("run", "--input NAME", arg, strlen(arg));
    char *data = path ? cli_read_file("run", eq + 1, WRK_JOB_MAX_MESSAGE, &len) : NULL;
    if (!data) {
        json_decref(path);
        return -1;
    }
    json_array_append_new(files, json_pack("{s:o, s:o}", "path", path, "content_base64",
                                           wrk_json_base64(data, len)));
    free(data);
    return 0;
}

static int limit_opt(json_t *limits, const char *name, const char *arg)
{
    unsigned v;
    if (cli_uint(name, arg, &v) < 0) return -1;
    char key[32];
    snprintf(key, sizeof key, "%s", name);
    for (char *p = key; *p; p++)
        if (*p == '-') *p = '_';
    json_object_set_new(limits, key, json_integer(v));
    return 0;
}

static int execute(wrk_config *c, json_t *job, bool as_json, bool with_audit)
{
    char why[512];
    bool dead;
    wrk_outcome o;
    char *s = json_dumps(job, JSON_COMPACT);
    wrk_execute(c, s, strlen(s), NULL, &o, &dead, why, sizeof why);
    free(s);
    sbx_zygote_shutdown(); /* zygote mode: gone before we are, not left to PDEATHSIG */
    if (dead) { /* only what the command line gave can make it unreadable: --id */
        fprintf(stderr, "codeq: run: %s\n", why);
        wrk_outcome_free(&o);
        return 2;
    }
    if (with_audit) {
        json_t *both = json_pack("{s:O, s:O}", "result", o.result, "audit", o.audit);
        cli_print_json(both);
        json_decref(both);
    } else if (as_json) {
        cli_print_json(o.result);
    } else {
        print_human(o.result);
    }
    int rc = strcmp(o.status, "ok") == 0 ? 0 : 1;
    wrk_outcome_free(&o);
    return rc;
}

int cmd_run(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"json", no_argument, NULL, 'j'},       {"audit", no_argument, NULL, 'a'},
        {"stdin", required_argument, NULL, 's'}, {"id", required_argument, NULL, 'i'},
        {"wall-ms", required_argument, NULL, 1}, {"cpu-ms", required_argument, NULL, 1},
        {"memory-mb", required_argument, NULL, 1}, {"output-bytes", required_argument, NULL, 1},
        {"io-read-bps", required_argument, NULL, 1}, {"io-write-bps", required_argument, NULL, 1},
        {"io-read-iops", required_argument, NULL, 1},
        {"io-write-iops", required_argument, NULL, 1},
        {"python", required_argument, NULL, 'p'}, {"help", no_argument, NULL, 'h'},
        {"policy", required_argument, NULL, 'P'},
        {"sandbox-profile", required_argument, NULL, 'S'},
        {"isolation", required_argument, NULL, 'I'},
        {"zygote-preload", required_argument, NULL, 'L'},
        {"zygote-start-ms", required_argument, NULL, 'Z'},
        {"input", required_argument, NULL, 'F'},
        {"uid-base", required_argument, NULL, 'U'}, {"uid-count", required_argument, NULL, 'U'},
        {NULL, 0, NULL, 0},
    };
    wrk_config c;
    bool as_json = false, with_audit = false;
    const char *stdin_path = NULL, *id = NULL;
    json_t *limits = json_object(), *files = json_array();
    val_policy *policy = NULL;
    char err[256];
    int opt, idx, rc = 2;
    wrk_config_default(&c);
    c.worker_id = "local";
    c.internal_paths = true; /* whoever runs this is the operator: the whole text */
    while ((opt = getopt_long(argc, argv, "h", longopts, &idx)) != -1) {
        switch (opt) {
        case 'j': as_json = true; break;
        case 'a': with_audit = true; break;
        case 's': stdin_path = optarg; break;
        case 'i': id = optarg; break;
        case 'p':
            if (cli_sandbox_opt(&c.sandbox, "run", "python", optarg) < 0) goto out;
            break;
        case 'I':
            if (cli_isolation_opt(&c.sandbox, "run", optarg) < 0) goto out;
            break;
        case 'L': c.sandbox.zygote_preload = optarg; break;
        case 'Z':
            if (cli_zygote_start_opt(&c.sandbox, optarg) < 0) goto out;
            break;
        case 'S':
            if (cli_sandbox_opt(&c.sandbox, "run", "sandbox-profile", optarg) < 0) goto out;
            break;
        case 'P':
            val_policy_free(policy);
            if (!(policy = val_policy_load(optarg, err, sizeof err))) {
                fprintf(stderr, "%s\n", err);
                goto out;
            }
            c.policy = policy;
            break;
        case 1:
            if (limit_opt(limits, longopts[idx].name, optarg) < 0) goto out;
            break;
        case 'F':
            if (input_opt(files, optarg) < 0) goto out;
            break;
        case 'U':
            if (cli_uid_opt(&c.sandbox, longopts[idx].name, optarg) < 0) goto out;
            break;
        case 'h': fputs(run_help, stdout); rc = 0; goto out;
        default: cli_see_help("run"); goto out;
        }
    }
    if (optind != argc - 1) {
        fprintf(stderr, "codeq: run: %s: it runs one program, FILE.py or - for standard input "
                "(--help for the options)\n",
                optind == argc ? "no program given" : "more than one program given");
        goto out;
    }
    char accounts[256];
    if (cli_uid_range_check("run", &c.sandbox, 1, accounts, sizeof accounts) < 0) goto out;
    if (accounts[0])
        fprintf(stderr, "codeq: run: job uids %u-%u include accounts of this host: %s\n",
                c.sandbox.uid_base, c.sandbox.uid_base + c.sandbox.uid_count - 1, accounts);
    wrk_config_finish(&c);
    size_t len, inlen = 0;
    char *code = cli_read_file("run", argv[optind], WRK_JOB_MAX_CODE, &len), *in = NULL;
    if (code && stdin_path) in = cli_read_file("run", stdin_path, WRK_JOB_MAX_STDIN, &inlen);
    char defid[300], part[280];
    /* a valid id from any name; the program on standard input is "local-stdin" */
    wrk_id_part(strcmp(argv[optind], "-") ? basename(argv[optind]) : "stdin", 250, part,
                sizeof part);
    snprintf(defid, sizeof defid, "local-%s", part);
    json_t *job = code && (!stdin_path || in)
                      ? build_job(id ? id : defid, code, len, in, inlen, limits)
                      : NULL;
    if (job && json_array_size(files)) json_object_set(job, "files", files);
    rc = job ? execute(&c, job, as_json, with_audit) : 2;
    json_decref(job);
    free(code);
    free(in);
out:
    json_decref(limits);
    json_decref(files);
    val_policy_free(policy);
    return rc;
}
