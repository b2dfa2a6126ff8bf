/* sbx_limits.c: the numbers a job runs under, and the names of its outcomes.
 *
 * Defaults are what a job gets when it asks for nothing; maxima are the operator's ceiling,
 * which sbx_start() enforces again so that no caller can hand the sandbox an unchecked value.
 * Zero is rejected for every limit: none of them has a useful "nothing allowed" meaning, and
 * 0 is what a forgotten field looks like. Two have higher minimums, below which no job can
 * start (so a client's too-small number is its mistake, not an internal error of ours): the
 * interpreter needs descriptors to start (5 in exec mode and 7 in zygote mode, measured; 16
 * leaves room), and exec mode needs 2 processes (the init and the main). The I/O limits have
 * floors too (sandbox.h): a job throttled to a byte a second held a page of the host's /usr
 * locked, for every reader, for its whole wall time.
 */
#include "sbx_int.h"

#include <stdio.h>

void sbx_limits_default(sbx_limits *l)
{
    *l = (sbx_limits){
        .wall_ms = 5000,
        .cpu_ms = 5000,
        .memory_mb = 50,
        .pids = 64,
        .output_bytes = 64 * 1024,
        .file_mb = 16,
        .open_files = 64,
        .tmpfs_mb = 64,
        .artifact_files = 16,
        .artifact_bytes = 1024 * 1024,
        .io_read_bps = 50u << 20,
        .io_write_bps = 50u << 20,
        .io_read_iops = 1000,
        .io_write_iops = 1000,
    };
}

void sbx_limits_max(sbx_limits *l)
{
    *l = (sbx_limits){
        .wall_ms = 60000,
        .cpu_ms = 60000,
        .memory_mb = 1024,
        .pids = 256,
        .output_bytes = 16 * 1024 * 1024,
        .file_mb = 256,
        .open_files = 1024,
        .tmpfs_mb = 1024,
        .artifact_files = 256,
        .artifact_bytes = 16 * 1024 * 1024,
        .io_read_bps = 500u << 20,
        .io_write_bps = 500u << 20,
        .io_read_iops = 10000,
        .io_write_iops = 10000,
    };
}

int sbx_limits_check(const sbx_limits *l, const sbx_limits *max, char *why, size_t whylen)
{
    const struct {
        const char *name;
        uint32_t v, max, min;
    } f[] = {
        {"wall_ms", l->wall_ms, max->wall_ms, 1},
        {"cpu_ms", l->cpu_ms, max->cpu_ms, 1},
        {"memory_mb", l->memory_mb, max->memory_mb, 1},
        {"pids", l->pids, max->pids, SBX_MIN_PIDS},
        {"output_bytes", l->output_bytes, max->output_bytes, 1},
        {"file_mb", l->file_mb, max->file_mb, 1},
        {"open_files", l->open_files, max->open_files, SBX_MIN_OPEN_FILES},
        {"tmpfs_mb", l->tmpfs_mb, max->tmpfs_mb, 1},
        {"artifact_files", l->artifact_files, max->artifact_files, 1},
        {"artifact_bytes", l->artifact_bytes, max->artifact_bytes, 1},
        {"io_read_bps", l->io_read_bps, max->io_read_bps, SBX_MIN_IO_BPS},
        {"io_write_bps", l->io_write_bps, max->io_write_bps, SBX_MIN_IO_BPS},
        {"io_read_iops", l->io_read_iops, max->io_read_iops, SBX_MIN_IO_IOPS},
        {"io_write_iops", l->io_write_iops, max->io_write_iops, SBX_MIN_IO_IOPS},
    };
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
        if (f[i].v < f[i].min) {
            snprintf(why, whylen, "limits.%s %u below minimum %u", f[i].name, f[i].v, f[i].min);
            return -1;
        }
        if (f[i].v > f[i].max) {
            snprintf(why, whylen, "limits.%s %u above maximum %u", f[i].name, f[i].v, f[i].max);
            return -1;
        }
    }
    if (whylen)
        why[0] = '\0';
    return 0;
}

const char *sbx_status_name(sbx_status s)
{
    static const char *const names[] = {
        [SBX_OK] = "ok",
        [SBX_ERROR] = "error",
        [SBX_TIMEOUT] = "timeout",
        [SBX_MEMORY_LIMIT] = "memory_limit",
        [SBX_OUTPUT_LIMIT] = "output_limit",
        [SBX_SIGNAL] = "signal",
        [SBX_INTERNAL] = "internal_error",
        [SBX_SECCOMP] = "seccomp_violation",
    };
    if ((unsigned)s < sizeof names / sizeof names[0])
        return names[s];
    return "internal_error";
}

void sbx_config_default(sbx_config *c)
{
    c->python = "/usr/bin/python3";
    c->work_root = "/tmp/codeq";
    c->profile = "full";
    c->cgroup_parent = "codeq";
    c->uid_base = 61000;
    c->uid_count = 1000;
    c->isolation = "exec"; /* the library's default; codeq's own is zygote (wrk_config.c) */
    c->zygote_path = NULL;
    c->seal_path = NULL;
    c->zygote_preload = NULL;
    c->zygote_max_jobs = 1000;
    c->zygote_max_age_s = 600;
}
