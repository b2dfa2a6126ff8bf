/* sbx_uts.c: the job's hostname.
 *
 * A UTS namespace of its own means the job can neither learn the worker's host name nor
 * change it; "codeq" is fixed so output that prints it is reproducible.
 */
#include "sbx_int.h"

#include <errno.h>
#include <sched.h>
#include <unistd.h>

static int sbx_uts_enter_init(sbx_proc *p)
{
    static const char name[] = "codeq";
    if (sethostname(name, sizeof name - 1) < 0)
        return sbx_child_fail(p, errno, "sethostname(codeq)", NULL);
    return 0;
}

const sbx_layer sbx_layer_uts = {
    .name = "uts",
    .clone_flag = CLONE_NEWUTS,
    .clone_flag_name = "CLONE_NEWUTS",
    .enter_init = sbx_uts_enter_init,
};
