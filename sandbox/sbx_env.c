/* sbx_env.c: the command line and the environment the job's interpreter starts with.
 *
 * The environment is built from nothing, never inherited: the worker's holds broker
 * credentials. It is prepared in the parent because the child may not allocate.
 * `-I` isolates the interpreter from the user's site-packages and makes it ignore every
 * PYTHON* variable (so PYTHONIOENCODING and PYTHONDONTWRITEBYTECODE below are belt and
 * braces: LANG=C.UTF-8 is what gives UTF-8 stdio, -B is what stops .pyc writes).
 */
#include "sbx_int.h"

#include <stdio.h>

/* The job's whole environment, in both isolation modes (the zygote is spawned with it, so a
 * job forked from it sees the same os.environ as an exec'd one). A job has one CPU's quota
 * (sbx_cgroup*.c): numerical libraries are told so, rather than starting a thread per host
 * CPU — which would also make a zygote that preloads numpy multi-threaded before it forks. */
#define SBX_JOB_ENV                                                                          \
    "PATH=/usr/bin:/bin", "HOME=/work" /* sbx_fs.c */, "LANG=C.UTF-8", "PYTHONIOENCODING=utf-8", \
        "PYTHONDONTWRITEBYTECODE=1", "OPENBLAS_NUM_THREADS=1", "OMP_NUM_THREADS=1",              \
        "MKL_NUM_THREADS=1"
char *const sbx_job_envp[] = {SBX_JOB_ENV, NULL};

/* The zygote's: the job's and one more, which the zygote removes before its interpreter
 * reads the environment (sbx_zygote_serve). With it the dynamic linker binds every function
 * of the zygote's libraries once, at its start; without it each job's three processes,
 * copies of the zygote, resolved the functions they were first to call and copied the GOT
 * pages they wrote. Extension modules are bound at load anyway (CPython dlopens RTLD_NOW). */
char *const sbx_zygote_envp[] = {SBX_JOB_ENV, SBX_ZYGOTE_BIND_NOW "=1", NULL};

static int sbx_env_prepare(sbx_proc *p)
{
    static char opt_isolate[] = "-I", opt_nopyc[] = "-B", script[] = "main.py";
    static char prelude[] = SBX_PRELUDE_NAME;

    p->envp = sbx_job_envp;
    p->argv[0] = p->python;
    p->argv[1] = opt_isolate;
    p->argv[2] = opt_nopyc;
    p->argv[3] = p->prelude ? prelude : script;
    p->argv[4] = NULL;
    return 0;
}

const sbx_layer sbx_layer_env = {
    .name = "env",
    .prepare = sbx_env_prepare,
};
