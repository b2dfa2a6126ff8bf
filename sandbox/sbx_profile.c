/* sbx_profile.c: named sets of layers an operator may choose, "full" unless told otherwise.
 *
 * A weaker profile exists for hosts that cannot give a layer (no delegated cgroup, a
 * kernel or runtime without seccomp): the operator picks it on purpose, by name, and its name
 * is in every result and audit event, so nobody mistakes such a run for a fully confined one.
 * Namespaces, the minimal root and the uid drop are in every profile: without them there is
 * no sandbox to speak of, and the worker refuses to start (sbx_selfcheck).
 */
#include "sbx_int.h"

#include <string.h>

const char *const sbx_profiles[] = {"full", "no-cgroup", "no-seccomp", NULL};

int sbx_profile_apply(sbx_proc *p, const char *name)
{
    for (int i = 0; sbx_profiles[i]; i++) {
        if (strcmp(name, sbx_profiles[i]) != 0)
            continue;
        p->profile = sbx_profiles[i];
        p->use_cgroup = strcmp(name, "no-cgroup") != 0;
        p->use_seccomp = strcmp(name, "no-seccomp") != 0;
        return 0;
    }
    return -1;
}
