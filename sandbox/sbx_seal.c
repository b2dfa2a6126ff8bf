/* sbx_seal.c: exec mode's copy of _codeq_seal, the runtime guard's C half.
 *
 * A zygote's interpreter has the module built in (sbx_zygote_seal.c, sbx_zygote_wall.c). An
 * exec'd interpreter loads the same two files built as an extension module, _codeq_seal.so,
 * which the job's root need not hold (the build tree's is outside it): a job with a prelude
 * gets a read-only descriptor of it as SBX_FD_SEAL, which the guard loads through
 * /proc/self/fd before any of the job's code runs, then closes (validator/val_guard.py,
 * _codeq_seal_module); the init closes its copy once the main process exists. The file lies
 * on the host's file system, so it maps executable where the job's own file systems are
 * noexec. Without a prelude, or in zygote mode, nothing is passed.
 *
 * The file: sbx_config.seal_path, else _codeq_seal.so beside the running executable, else the
 * build tree's. One that cannot be opened fails the job as the sandbox's, before it starts: a
 * guard without its C half would hold its state where a leaked getattr reaches it. The
 * worker's self-check loads it in exec mode (sbx_selfcheck.c), so a file that is missing or
 * does not load stops the worker at start-up instead.
 */
#include "sbx_int.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int sbx_beside_self(const char *name, int mode, const char *build_path, char *path, size_t n)
{
    char self[PATH_MAX - 32];
    ssize_t k = readlink("/proc/self/exe", self, sizeof self - 1);
    if (k > 0) {
        self[k] = '\0';
        char *slash = strrchr(self, '/');
        if (slash) {
            *slash = '\0';
            snprintf(path, n, "%s/%s", self, name);
            if (access(path, mode) == 0)
                return 0;
        }
    }
    if (!build_path)
        return -1;
    snprintf(path, n, "%s", build_path);
    return 0;
}

#ifdef CODEQ_SEAL_BUILD_PATH
#define SBX_SEAL_BUILD_PATH CODEQ_SEAL_BUILD_PATH
#else
#define SBX_SEAL_BUILD_PATH NULL
#endif

/* The module, read-only: its descriptor, or -1 with errno; path says which file. */
static int sbx_seal_open(const char *configured, char *path, size_t n)
{
    if (configured && *configured)
        snprintf(path, n, "%s", configured);
    else if (sbx_beside_self("_codeq_seal.so", R_OK, SBX_SEAL_BUILD_PATH, path, n) < 0) {
        snprintf(path, n, "_codeq_seal.so beside the executable");
        errno = ENOENT;
        return -1;
    }
    return open(path, O_RDONLY | O_CLOEXEC);
}

static int sbx_seal_prepare(sbx_proc *p)
{
    if (!p->prelude || p->inproc)
        return 0;
    char path[PATH_MAX];
    if ((p->seal_fd = sbx_seal_open(p->seal_path, path, sizeof path)) < 0)
        return sbx_fail(p, errno, "open(%s)", path);
    return 0;
}

/* The init holds its copy as SBX_FD_SEAL (sbx_init.c). */
static int sbx_seal_release(sbx_proc *p)
{
    sbx_close(&p->seal_fd);
    return 0;
}

const sbx_layer sbx_layer_seal = {
    .name = "seal",
    .prepare = sbx_seal_prepare,
    .from_parent = sbx_seal_release,
    .collect = sbx_seal_release,
};
