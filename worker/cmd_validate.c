/* codeq validate: the validator as a linter (file:line:col: RULE message), the same code the
 * worker and `codeq run` use. Exit 1 when any finding, 2 when a file cannot be checked. */
#include <string.h>

#include "cli.h"
#include "wrk_internal.h"

static const char validate_help[] =
    "usage: codeq validate [--json] [--policy FILE|NAME] FILE.py...\n\n"
    "Check programs against the validator policy (rule ids: docs/validator.md).\n\n"
    "  --json                print one JSON object per file: {\"file\", \"findings\": [...]}\n"
    "                        (and file_base64 when the name is not UTF-8)\n"
    "  --policy FILE|NAME    a policy file (schemas/policy.schema.json) or a built-in\n"
    "                        profile: strict (default), data\n"
    "  -h, --help            this help\n\n"
    "Exit status: 0 no findings, 1 findings, 2 a file could not be read or checked.\n";

static int check_file(const char *path, bool as_json, const val_policy *policy)
{
    char err[256];
    size_t len;
    val_report rep = {0};
    char *code = cli_read_file("validate", path, WRK_JOB_MAX_CODE, &len);
    if (!code) return 2;
    int rc = val_check_policy(policy, code, len, &rep, err, sizeof err);
    free(code);
    if (rc < 0) {
        fprintf(stderr, "%s: %s\n", path, err);
        return 2;
    }
    if (as_json) {
        /* A file's name is bytes: one that is not UTF-8 comes as text with U+FFFD and
         * exactly as file_base64, as a result's artifacts do. */
        bool lossy;
        json_t *o = json_pack("{s:o, s:o}", "file", wrk_json_bytes(path, strlen(path), &lossy),
                              "findings", wrk_findings_json(&rep, 0));
        if (lossy) json_object_set_new(o, "file_base64", wrk_json_base64(path, strlen(path)));
        json_dumpf(o, stdout, JSON_COMPACT);
        putchar('\n');
        json_decref(o);
    } else {
        for (size_t i = 0; i < rep.count; i++)
            printf("%s:%d:%d: %s %s\n", path, rep.items[i].line, rep.items[i].col,
                   rep.items[i].rule, rep.items[i].message);
    }
    rc = rep.count ? 1 : 0;
    val_report_free(&rep);
    return rc;
}

int cmd_validate(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"json", no_argument, NULL, 'j'}, {"help", no_argument, NULL, 'h'},
        {"policy", required_argument, NULL, 'P'}, {NULL, 0, NULL, 0}};
    bool as_json = false;
    const char *policy_arg = NULL;
    int opt, worst = 0;
    char err[256];
    while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        if (opt == 'j') as_json = true;
        else if (opt == 'P') policy_arg = optarg;
        else if (opt == 'h') { fputs(validate_help, stdout); return 0; }
        else return cli_see_help("validate");
    }
    if (optind >= argc) {
        fprintf(stderr, "codeq: validate: no program given: name one or more FILE.py, or - "
                "for standard input (--help for the options)\n");
        return 2;
    }
    if (val_init(err, sizeof err) < 0) {
        fprintf(stderr, "%s\n", err);
        return 2;
    }
    val_policy *policy = val_policy_load(policy_arg, err, sizeof err);
    if (!policy) {
        fprintf(stderr, "%s\n", err);
        return 2;
    }
    for (int i = optind; i < argc; i++) {
        int rc = check_file(argv[i], as_json, policy);
        if (rc > worst) worst = rc;
    }
    val_policy_free(policy);
    return worst;
}
