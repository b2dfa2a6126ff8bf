/* sbx_selfcheck.c: fail closed at start-up — prove the chosen profile works on this host.
 *
 * Each layer already refuses to run a job it cannot confine (internal_error with the
 * reason), but a worker that starts anyway would then answer every job with internal_error.
 * So the worker calls this first: the profile must be known, its cgroup backend must be able
 * to create and remove a cgroup with every controller, and one trivial job must run and
 * report from inside what the layers promise: not uid 0, no effective capabilities,
 * no_new_privs, seccomp filter mode (unless the profile drops it), /work as cwd and no
 * /etc/shadow in its view; in exec mode it runs under a prelude that loads the guard's C module
 * as the guard does (sbx_seal.c). The first thing that is not so is the reason.
 */
#include "sbx_int.h"

#include <stdio.h>
#include <string.h>

static const char sbx_selfcheck_code[] =
    "import os\n"
    "f = dict(l.split(':', 1) for l in open('/proc/self/status').read().splitlines())\n"
    "print(os.getuid() != 0, f['CapEff'].strip(), f['NoNewPrivs'].strip(),\n"
    "      f['Seccomp'].strip(), os.path.exists('/etc/shadow'), os.getcwd())\n";

/* Exec mode: a prelude gets the guard's C module as descriptor 5 (sbx_seal.c), loaded here
 * as validator/val_guard.py loads it. A file that opens but does not load (another Python's
 * build, a damaged copy) would otherwise fail every guarded job, as the job's error. */
static const char sbx_selfcheck_seal[] =
    "try:\n"
    "    from importlib.machinery import ExtensionFileLoader, ModuleSpec\n"
    "    l = ExtensionFileLoader('_codeq_seal', '/proc/self/fd/5')\n"
    "    l.create_module(ModuleSpec('_codeq_seal', l, origin=l.path)).arm\n"
    "except Exception as e:\n"
    "    raise SystemExit(f'_codeq_seal.so does not load: {e}')\n"
    "import os\n"
    "os.close(5)\n"
    "exec(compile(open('main.py').read(), 'main.py', 'exec'))\n";

static int sbx_selfcheck_profile(const sbx_config *c, bool *cgroup, bool *seccomp)
{
    sbx_proc probe = {0};
    if (sbx_profile_apply(&probe, c->profile ? c->profile : "full") < 0)
        return -1;
    *cgroup = probe.use_cgroup;
    *seccomp = probe.use_seccomp;
    return 0;
}

int sbx_selfcheck(const sbx_config *c, sbx_host *host, char *why, size_t whylen)
{
    sbx_host found = {0};
    sbx_config def;
    sbx_config_default(&def);
    if (!c)
        c = &def;
    bool cgroup, seccomp;
    if (sbx_selfcheck_profile(c, &cgroup, &seccomp) < 0) {
        snprintf(why, whylen, SBX_PREFIX "unknown sandbox profile '%s' (known: full, no-cgroup, "
                 "no-seccomp)", c->profile);
        return -1;
    }
    if (cgroup) {
        const sbx_cgroup_ops *ops = sbx_cgroup_backend(why, whylen);
        if (!ops)
            return -1;
        if (ops->probe(c->cgroup_parent ? c->cgroup_parent : def.cgroup_parent, why, whylen) < 0)
            return -1;
        found.cgroup_version = ops == &sbx_cgroup_v2 ? 2 : 1;
    }
    sbx_job job = {.code = sbx_selfcheck_code, .code_len = sizeof sbx_selfcheck_code - 1,
                   .job_id = "selfcheck"};
    sbx_limits_default(&job.limits);
    if (!c->isolation || strcmp(c->isolation, "exec") == 0) {
        job.prelude = sbx_selfcheck_seal;
        job.prelude_len = sizeof sbx_selfcheck_seal - 1;
    }
    sbx_result r;
    sbx_run(c, &job, &r);
    char want[128];
    snprintf(want, sizeof want, "True 0000000000000000 1 %s False /work\n", seccomp ? "2" : "0");
    int rc = 0;
    if (r.status != SBX_OK && r.message[0]) {
        snprintf(why, whylen, "%s (self-check job: %s)", r.message, sbx_status_name(r.status));
        rc = -1;
    } else if (r.status != SBX_OK) {
        snprintf(why, whylen, SBX_PREFIX "self-check job ended %s: %.160s",
                 sbx_status_name(r.status), r.err.data ? r.err.data : "");
        rc = -1;
    } else if (strcmp(r.out.data, want) != 0) {
        snprintf(why, whylen, SBX_PREFIX "self-check: the job reports '%.60s', want '%.60s'",
                 r.out.data, want);
        rc = -1;
    }
    found.cgroup_born = r.cgroup_born;
    if (host)
        *host = found;
    sbx_result_free(&r);
    return rc;
}
