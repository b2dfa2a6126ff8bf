/* copy_cost_exit: a static program that waits for its children, if it has any, and exits 0.
 * For copy_cost_bench: spawned alone it is the cost of exec'ing a small helper; exec'd as a
 * job's init after the init forked the main process it is the helper that reaps it. */
#include <errno.h>
#include <sys/wait.h>

int main(void)
{
    int st;
    while (wait(&st) > 0 || errno == EINTR)
        ;
    return 0;
}
