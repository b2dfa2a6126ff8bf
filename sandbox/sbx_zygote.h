/* sbx_zygote.h: the control channel between the worker and a zygote (sbx_zygote*.c only),
 * and the zygote's interpreter set-up (bench/copy_cost_bench.c takes the same shape with it).
 *
 * SOCK_SEQPACKET: one message is one request or answer, the boundaries are kept and EOF says
 * the peer is gone. A job and its result travel as a memfd (sbx_zygote_wire.c) attached to
 * the message with SCM_RIGHTS; the message itself is small and fixed.
 */
#ifndef CODEQ_SBX_ZYGOTE_H
#define CODEQ_SBX_ZYGOTE_H

#include <stdint.h>
#include <sys/types.h>

/* The zygote's end of the control socket, fixed by the worker's posix_spawn. */
enum { SBX_ZY_FD = 3 };

enum {
    SBX_ZY_READY = 'Y',  /* zygote -> worker: the interpreter is up */
    SBX_ZY_JOB = 'J',    /* worker -> zygote: run the job in the attached memfd */
    SBX_ZY_STOP = 'S',   /* worker -> zygote: kill the running job, text says why */
    SBX_ZY_RESULT = 'R', /* zygote -> worker: the result in the attached memfd */
    SBX_ZY_ERROR = 'E',  /* zygote -> worker: could not run the job (or start), text says why */
    SBX_ZY_UNSTARTED = 'U', /* zygote -> worker: the job never started, its code certainly did
                             * not run (sbx_result.unstarted); text says why */
};

typedef struct {
    int32_t type;
    uint32_t seq; /* a job's number on this zygote; its answer and stop carry it too */
    char text[240];
} sbx_zy_msg;

/* One message, with fd attached when fd >= 0. Never SIGPIPE. 0 or -1 (errno). */
int sbx_zy_send(int sock, const sbx_zy_msg *m, int fd);
/* One message; *fd gets an attached descriptor (CLOEXEC) or stays -1. recv's return. */
ssize_t sbx_zy_recv(int sock, sbx_zy_msg *m, int *fd, int flags);

/* The zygote's interpreter: initialized isolated for `python`, the modules of `preload`
 * imported ("?name": if installed), the guard `prelude` prepared once, gc.freeze(); refuses a
 * preload that left a thread running. 0, or -1 with why. (sbx_zygote_py.c) */
int sbx_zy_py_init(const char *python, const char *preload, const char *prelude, char *why,
                   size_t whylen);
/* Registers `_codeq_seal` (sbx_zygote_seal.c) as a built-in module; before the interpreter
 * is initialized. PyImport_AppendInittab's return. */
int sbx_zy_seal_register(void);

#endif
