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

static int sbx_env_prepare(sbx_proc *p)
{
    static char path[] = "PATH=/usr/bin:/bin";
    static char lang[] = "LANG=C.UTF-8";
    static char ioenc[] = "PYTHONIOENCODING=utf-8";
    static char nopyc[] = "PYTHONDONTWRITEBYTECODE=1";
    static char opt_isolate[] = "-I", opt_nopyc[] = "-B", script[] = "main.py";
    static char prelude[] = SBX_PRELUDE_NAME;

    snprintf(p->env_home, sizeof p->env_home, "HOME=/work"); /* sbx_fs.c */
    char **e = p->envp;
    *e++ = path;
    *e++ = p->env_home;
    *e++ = lang;
    *e++ = ioenc;
    *e++ = nopyc;
    *e = NULL;

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
