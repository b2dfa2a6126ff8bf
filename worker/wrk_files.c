/* Decode: a job's input files, written into its /work before it runs (Piston's `files`).
 * The shape mirrors the result's artifacts, so a pipeline can feed one job's outputs to the
 * next: text as "content", anything else as "content_base64". Paths and sizes are checked
 * here with the sandbox's own rules, so a bad file makes the job `invalid` with the reason,
 * instead of an internal error at start. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wrk_internal.h"

static int decode_one(json_t *f, size_t i, wrk_job *job, char *why, size_t whylen)
{
    json_t *path = json_object_get(f, "path"), *text = json_object_get(f, "content"),
           *b64 = json_object_get(f, "content_base64");
    if (!json_is_object(f) || !json_is_string(path) || json_object_size(f) != 2 ||
        (!json_is_string(text) == !json_is_string(b64))) {
        snprintf(why, whylen,
                 "files[%zu] must be {\"path\": ..., \"content\": ...} or "
                 "{\"path\": ..., \"content_base64\": ...}", i);
        return -1;
    }
    sbx_file *sf = &job->files[i];
    if (!(sf->path = wrk_json_name(path))) {
        snprintf(why, whylen, "files[%zu].path contains a NUL character (\\u0000)", i);
        return -1;
    }
    if (text) {
        sf->data = json_string_value(text);
        sf->len = json_string_length(text);
        return 0;
    }
    long n = wrk_base64_decode(json_string_value(b64), json_string_length(b64), 16u * 1024 * 1024,
                               &job->file_bufs[i]);
    if (n < 0) {
        snprintf(why, whylen, "files[%zu].content_base64 is not valid base64", i);
        return -1;
    }
    sf->data = job->file_bufs[i];
    sf->len = (size_t)n;
    return 0;
}

int wrk_files_decode(json_t *arr, wrk_job *job, size_t prelude_len, char *why, size_t whylen)
{
    if (!arr) return 0;
    if (!json_is_array(arr)) {
        snprintf(why, whylen, "files must be an array");
        return -1;
    }
    size_t n = json_array_size(arr);
    if (n > SBX_MAX_FILES) {
        snprintf(why, whylen, "files: %zu files, at most %d", n, SBX_MAX_FILES);
        return -1;
    }
    job->files = calloc(n ? n : 1, sizeof *job->files);
    job->file_bufs = calloc(n ? n : 1, sizeof *job->file_bufs);
    if (!job->files || !job->file_bufs) {
        snprintf(why, whylen, "files: out of memory");
        return -1;
    }
    job->nfiles = n;
    for (size_t i = 0; i < n; i++)
        if (decode_one(json_array_get(arr, i), i, job, why, whylen) < 0) return -1;
    return sbx_files_check(job->files, n, job->code_len, prelude_len, &job->limits, why,
                           whylen);
}

void wrk_files_free(wrk_job *job)
{
    for (size_t i = 0; job->file_bufs && i < job->nfiles; i++) free(job->file_bufs[i]);
    free(job->file_bufs);
    free(job->files);
    job->file_bufs = NULL;
    job->files = NULL;
    job->nfiles = 0;
}
