/* fuzz_decode: any bytes as a job record -> wrk_job_decode with a default configuration.
 * It must never crash, leak or read out of bounds (ASan, UBSan), and what it accepts must hold
 * the decoder's promises: an id of 1-256 characters without control characters, every limit
 * between 1 and the operator's maximum, code and stdin within their sizes, a reply_to that is
 * the results topic or under the reply prefix, input files within the sandbox's rules. A
 * refused record always says why, and keeps its id only when that id is valid. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wrk_internal.h"

static wrk_config cfg;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    wrk_config_default(&cfg);
    return 0;
}

static void check_id(const char *id)
{
    size_t n = strlen(id), chars = 0;
    for (size_t i = 0; i < n; i++) {
        if ((unsigned char)id[i] < 0x20 || id[i] == 0x7f) abort();
        chars += ((unsigned char)id[i] & 0xC0) != 0x80;
    }
    if (chars == 0 || chars > 256) abort();
}

static void check_accepted(const wrk_job *j)
{
    static const char *const names[] = {"wall_ms", "cpu_ms", "memory_mb", "pids",
        "output_bytes", "file_mb", "open_files", "tmpfs_mb", "artifact_files", "artifact_bytes",
        NULL};
    if (!j->id || !j->root || !j->code) abort();
    check_id(j->id);
    if (j->code_len > 256 * 1024 || j->stdin_len > 1024 * 1024) abort();
    if (strlen(j->code_sha256) != 64 || strspn(j->code_sha256, "0123456789abcdef") != 64)
        abort();
    sbx_limits lim = j->limits, max = cfg.max;
    for (const char *const *n = names; *n; n++) {
        uint32_t v = *wrk_limit_field(&lim, *n), m = *wrk_limit_field(&max, *n);
        if (v < 1 || v > m) abort();
    }
    if (j->reply_to && strcmp(j->reply_to, cfg.kafka.results_topic) != 0 &&
        strncmp(j->reply_to, cfg.reply_prefix, strlen(cfg.reply_prefix)) != 0)
        abort();
    if (j->nfiles > SBX_MAX_FILES || (j->nfiles && !j->files)) abort();
    char why[256];
    size_t guard_len; /* the default policy's runtime guard is staged beside the files */
    val_policy_guard(val_policy_default(), &guard_len);
    if (sbx_files_check(j->files, j->nfiles, j->code_len, guard_len, &j->limits, why,
                        sizeof why) != 0)
        abort();
    volatile unsigned sum = 0; /* every byte of every file readable: ASan checks the lengths */
    for (size_t i = 0; i < j->nfiles; i++)
        for (size_t k = 0; k < j->files[i].len; k++) sum += (unsigned char)j->files[i].data[k];
    (void)sum;
    /* a deadline read is never "none" (0), even the epoch's own or one before it */
    if (json_object_get(j->root, "deadline") && j->deadline_ms == 0) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    wrk_job job;
    char why[512];
    why[0] = '\0';
    int rc = wrk_job_decode((const char *)data, size, &cfg, &job, why, sizeof why);
    if (rc == 0) {
        check_accepted(&job);
    } else {
        if (rc != -1 || !why[0]) abort();
        if (job.id) check_id(job.id);
    }
    wrk_job_free(&job);
    return 0;
}
