/* sbx_seccomp.c: the system calls a job may make — an allowlist, loaded last before execve.
 *
 * What CPython 3.11 (and numpy, multiprocessing, subprocess) needs is allowed; a handful of
 * calls are answered instead of killed, because programs probe them and cope: clone3 gets
 * ENOSYS (glibc then falls back to clone), and the known dangerous ones (ptrace, mount,
 * namespaces, kexec, bpf, perf, keyrings, userfaultfd, io_uring, process_vm_*, syslog, ...)
 * get EPERM, as does clone with a namespace flag, socket/socketpair of any family but
 * AF_UNIX (any high bit set fails too) and ioctl(TIOCSTI) — compared on the low 32 bits, since
 * the kernel ignores the high ones; ioctl requests other than the terminal and descriptor
 * ones get ENOTTY (sbx_sc_ioctl). Sending SIGSYS in any way gets EPERM, so that a SIGSYS death is the filter's
 * (sbx_sc_signals); advice that would evict the host's page cache does nothing
 * (sbx_sc_cache); setting RLIMIT_CORE does nothing (sbx_sc_core); locks and inode watches,
 * channels between jobs through the inodes they share, do nothing or get EPERM
 * (sbx_sc_shared_inodes); exec mode gets no memfd (sbx_sc_own_code); huge pages of the host's
 * hugetlb pool and names of anonymous mappings, which no memory cgroup counts, get EPERM
 * (sbx_sc_uncharged). Anything else ends the whole job: an unexpected call is either an
 * attack or a gap in this list, and either way a clear seccomp_violation naming the call beats
 * a mysterious errno. personality() other than
 * the default persona or the query is such a call, and so is any call of another architecture
 * (i386 int 0x80, x32): their numbers mean different calls.
 * The kernel does not kill for it (SCMP_ACT_KILL_PROCESS would kill only the calling process,
 * which a parent in the job may reap and carry on: the job would end `ok`). The calls filter's
 * default is SCMP_ACT_NOTIFY: the call waits, unrun, while its listener tells the job's
 * supervisor, which kills every process of the job and reports the call. The main process
 * sends the listener to the supervisor and closes it before any code of the job runs; should
 * the supervisor lose it, a refused call fails with ENOSYS (the kernel's answer without a
 * listener), never runs.
 * Two filters, both loaded: the calls filter says which calls (the allowlist; default kill),
 * the values filter which argument values of allowed calls are answered instead (default
 * allow); the kernel takes the most restrictive answer of the two.
 * The filters are built once per process with libseccomp and exported as BPF in the parent:
 * the child only hands the finished programs to the kernel (no malloc after clone).
 */
#include "sbx_int.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sched.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

static const char *const sbx_sc_allow[] = {
    /* files and descriptors */
    "read", "write", "readv", "writev", "pread64", "pwrite64", "preadv", "pwritev", "preadv2",
    "pwritev2", "open", "openat", "openat2", "creat", "close", "close_range", "stat", "fstat",
    "lstat", "newfstatat", "statx", "lseek", "access", "faccessat", "faccessat2", "pipe",
    "pipe2", "dup", "dup2", "dup3", "fsync", "fdatasync", "sync_file_range",
    "truncate", "ftruncate", "getdents", "getdents64", "getcwd", "chdir", "fchdir", "rename",
    "renameat", "renameat2", "mkdir", "mkdirat", "rmdir", "link", "linkat", "unlink",
    "unlinkat", "symlink", "symlinkat", "readlink", "readlinkat", "chmod", "fchmod",
    "fchmodat", "chown", "fchown", "lchown", "fchownat", "umask", "mknod", "mknodat", "statfs", "fstatfs",
    "utime", "utimes", "utimensat", "futimesat", "fallocate", "copy_file_range", "sendfile",
    "splice", "tee", "readahead", "memfd_create", "eventfd", "eventfd2",
    "timerfd_create", "timerfd_settime", "timerfd_gettime", "signalfd", "signalfd4", "getxattr",
    "lgetxattr", "fgetxattr", "listxattr", "llistxattr", "flistxattr",
    /* waiting */
    "select", "pselect6", "poll", "ppoll", "epoll_create", "epoll_create1", "epoll_ctl",
    "epoll_wait", "epoll_pwait", "epoll_pwait2", "nanosleep", "clock_nanosleep", "pause",
    "futex", "futex_waitv", "set_robust_list", "get_robust_list", "sched_yield",
    /* memory */
    "brk", "mmap", "munmap", "mprotect", "mremap", "msync", "mincore", "mlock", "mlock2",
    "munlock", "mlockall", "munlockall", "membarrier", "get_mempolicy",
    /* processes and signals (inside the job's own pid namespace) */
    "fork", "vfork", "execve", "execveat", "exit", "exit_group", "wait4", "waitid",
    "rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "rt_sigpending", "rt_sigtimedwait",
    "rt_sigsuspend", "sigaltstack", "pidfd_open", "set_tid_address", "rseq", "arch_prctl",
    "restart_syscall", "getitimer", "setitimer", "alarm", "timer_settime", "timer_gettime",
    "timer_getoverrun", "timer_delete",
    /* with argument rules in the values filter: sbx_sc_allow_values */
    /* identity and limits: reading, or changes the kernel refuses without capabilities */
    "getpid", "getppid", "gettid", "getuid", "geteuid", "getgid", "getegid", "getresuid",
    "getresgid", "getgroups", "getpgrp", "getpgid", "getsid", "setsid", "setpgid", "setuid",
    "setgid", "setreuid", "setregid", "setresuid", "setresgid", "setgroups", "setfsuid",
    "setfsgid", "capget", "capset", "getrlimit", "getrusage",
    "getpriority", "setpriority", "sched_getaffinity", "sched_getparam", "sched_getscheduler",
    "sched_get_priority_max", "sched_get_priority_min", "sched_getattr", "sched_rr_get_interval",
    "ioprio_get", "getcpu",
    /* time and system facts */
    "uname", "sysinfo", "times", "time", "gettimeofday", "clock_gettime", "clock_getres",
    "getrandom",
    /* AF_UNIX sockets (socket and socketpair are filtered below) */
    "connect", "accept", "accept4", "bind", "listen", "sendto", "recvfrom", "sendmsg",
    "recvmsg", "sendmmsg", "recvmmsg", "shutdown", "getsockname", "getpeername", "setsockopt",
    "getsockopt",
    /* SysV IPC and POSIX queues: the job's own ipc namespace */
    "shmget", "shmat", "shmdt", "shmctl", "semget", "semop", "semtimedop", "semctl", "msgget",
    "msgsnd", "msgrcv", "msgctl", "mq_open", "mq_unlink", "mq_timedsend", "mq_timedreceive",
    "mq_getsetattr",
};

static const char *const sbx_sc_deny[] = {
    "ptrace", "mount", "umount2", "pivot_root", "chroot", "unshare", "setns", "kexec_load",
    "kexec_file_load", "bpf", "perf_event_open", "keyctl", "add_key", "request_key",
    "userfaultfd", "io_uring_setup", "io_uring_enter", "io_uring_register", "process_vm_readv",
    "process_vm_writev", "process_madvise", "pidfd_getfd", "kcmp", "syslog", "acct", "swapon",
    "swapoff", "reboot", "init_module", "finit_module", "delete_module", "quotactl",
    "open_by_handle_at", "name_to_handle_at", "fanotify_init", "iopl", "ioperm",
    "settimeofday", "clock_settime", "clock_adjtime", "adjtimex", "sethostname",
    "setdomainname", "sched_setaffinity", "sched_setparam", "sched_setscheduler",
    "sched_setattr", "ioprio_set", "fsopen", "fsmount", "fsconfig", "fspick", "move_mount",
    "open_tree", "mount_setattr", "move_pages", "migrate_pages", "mbind", "set_mempolicy",
    "vhangup", "uselib", "ustat", "sysfs", "lookup_dcookie", "nfsservctl", "vmsplice",
    "landlock_create_ruleset", "memfd_secret", "seccomp", "inotify_init", "inotify_init1",
    "inotify_add_watch", "inotify_rm_watch",
};

/* personality has argument rules in the calls filter: an unconditional rule for it would
 * override those. */
static int sbx_sc_name(scmp_filter_ctx c, uint32_t action, const char *name)
{
    int nr = seccomp_syscall_resolve_name(name);
    if (nr == __NR_SCMP_ERROR)
        return 0; /* unknown to this libseccomp: the default action covers it */
    return seccomp_rule_add(c, action, nr, 0);
}

/* One value of one argument (compared on its low 32 bits: the kernel reads these arguments as
 * int) gets `action`. These rules go into a second filter of their own whose default is to
 * allow (see sbx_sc_build): the kernel runs every filter a process has and takes the most
 * restrictive answer, so "this value gets EPERM, any other is allowed" is one masked compare
 * there, while in the allowlist it took a rule for every leaf of a trie over the other 2^32
 * values (~1,400 of the allowlist's 1,583 instructions, ~0.3 ms of each job's filter load). */
typedef struct {
    uint32_t value;
    uint32_t action;
} sbx_sc_val;

static struct scmp_arg_cmp sbx_sc_low32(unsigned arg, uint32_t value)
{
    return (struct scmp_arg_cmp)SCMP_CMP(arg, SCMP_CMP_MASKED_EQ, 0xffffffffu, value);
}

#define SBX_SC_N(a) (sizeof(a) / sizeof((a)[0]))

static int sbx_sc_values(scmp_filter_ctx c, int nr, unsigned arg, const sbx_sc_val *v, size_t n)
{
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < n; i++)
        rc = seccomp_rule_add(c, v[i].action, nr, 1, sbx_sc_low32(arg, v[i].value));
    return rc;
}

/* `a0 == v0 && a1 == v1` (low 32 bits) -> action. */
static int sbx_sc_pair(scmp_filter_ctx c, int nr, unsigned a0, uint32_t v0, unsigned a1,
                       uint32_t v1, uint32_t action)
{
    return seccomp_rule_add(c, action, nr, 2, sbx_sc_low32(a0, v0), sbx_sc_low32(a1, v1));
}

/* A SIGSYS death must mean the filter killed the process, so no process of the job can send
 * SIGSYS or arrange for one (issue 11): EPERM for SIGSYS through kill, tkill, tgkill,
 * rt_sigqueueinfo, rt_tgsigqueueinfo, pidfd_send_signal, prctl(PR_SET_PDEATHSIG),
 * fcntl(F_SETSIG) (I/O, lease and dnotify signals) and clone's exit signal (below); and for
 * timer_create and mq_notify with a sigevent, which names its signal in memory the filter
 * cannot read (NULL, i.e. SIGALRM, stays allowed). A handler or sigaction does not matter:
 * the default action is what kills. The kernel itself sends SIGSYS for a system call in two
 * more ways a job could arrange: a seccomp filter of its own (prctl(PR_SET_SECCOMP); the
 * seccomp call is refused with the dangerous calls) and syscall user dispatch
 * (prctl(PR_SET_SYSCALL_USER_DISPATCH)): EPERM for both, whatever their arguments. */
static int sbx_sc_signals(scmp_filter_ctx c)
{
    static const struct {
        const char *name;
        unsigned arg;
    } send[] = {{"kill", 1}, {"tkill", 1}, {"tgkill", 2}, {"rt_sigqueueinfo", 1},
                {"rt_tgsigqueueinfo", 2}, {"pidfd_send_signal", 1}};
    const sbx_sc_val sigsys = {SIGSYS, SCMP_ACT_ERRNO(EPERM)};
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < sizeof send / sizeof send[0]; i++)
        rc = sbx_sc_values(c, seccomp_syscall_resolve_name(send[i].name), send[i].arg, &sigsys, 1);
    if (rc == 0)
        rc = sbx_sc_pair(c, SCMP_SYS(prctl), 0, PR_SET_PDEATHSIG, 1, SIGSYS, SCMP_ACT_ERRNO(EPERM));
    if (rc == 0)
        rc = sbx_sc_pair(c, SCMP_SYS(fcntl), 1, F_SETSIG, 2, SIGSYS, SCMP_ACT_ERRNO(EPERM));
    const sbx_sc_val own[] = {{PR_SET_SECCOMP, SCMP_ACT_ERRNO(EPERM)},
                              {59 /* PR_SET_SYSCALL_USER_DISPATCH, Linux 5.11 */,
                               SCMP_ACT_ERRNO(EPERM)}};
    if (rc == 0)
        rc = sbx_sc_values(c, SCMP_SYS(prctl), 0, own, 2);
    const int sev[] = {SCMP_SYS(timer_create), SCMP_SYS(mq_notify)};
    for (size_t i = 0; rc == 0 && i < 2; i++)
        rc = seccomp_rule_add(c, SCMP_ACT_ERRNO(EPERM), sev[i], 1, SCMP_A1(SCMP_CMP_NE, 0));
    return rc;
}

/* The host's page cache is shared with the job (its /usr is the host's, through an overlay):
 * advice that evicts or reclaims cached pages of a file is answered 0 and does nothing —
 * posix_fadvise DONTNEED/NOREUSE, madvise COLD/PAGEOUT (file mappings) and COLLAPSE (which
 * replaces a file's cached pages with a huge page) — and madvise REMOVE (punches a hole in
 * the file) gets EPERM. So is advice that queues reads ahead of use, answered 0 and done
 * nothing about: posix_fadvise WILLNEED and SEQUENTIAL (a doubled read-ahead window),
 * readahead(), madvise WILLNEED, POPULATE_READ and POPULATE_WRITE. A page being read is
 * locked for every reader, the host's too, until its read completes, and the job's reads
 * wait in its cgroup's I/O throttle: one call queued 9,295 single-page reads of a /usr file
 * in 24 ms, and a host process reading a page near its end waited 7.7 s (a red-team review
 * of 2026-12-06). Without them a job queues one read-ahead window per thread at most.
 * Everything else a program advises is allowed. */
static int sbx_sc_cache(scmp_filter_ctx c)
{
    const sbx_sc_val fadv[] = {{POSIX_FADV_DONTNEED, SCMP_ACT_ERRNO(0)},
                               {POSIX_FADV_NOREUSE, SCMP_ACT_ERRNO(0)},
                               {POSIX_FADV_WILLNEED, SCMP_ACT_ERRNO(0)},
                               {POSIX_FADV_SEQUENTIAL, SCMP_ACT_ERRNO(0)}};
    const sbx_sc_val madv[] = {{MADV_COLD, SCMP_ACT_ERRNO(0)},
                               {MADV_PAGEOUT, SCMP_ACT_ERRNO(0)},
                               {25 /* MADV_COLLAPSE, Linux 6.1 */, SCMP_ACT_ERRNO(0)},
                               {MADV_WILLNEED, SCMP_ACT_ERRNO(0)},
                               {22 /* MADV_POPULATE_READ */, SCMP_ACT_ERRNO(0)},
                               {23 /* MADV_POPULATE_WRITE */, SCMP_ACT_ERRNO(0)},
                               {MADV_REMOVE, SCMP_ACT_ERRNO(EPERM)}};
    int rc = sbx_sc_values(c, SCMP_SYS(fadvise64), 3, fadv, SBX_SC_N(fadv));
    if (rc == 0) rc = sbx_sc_values(c, SCMP_SYS(madvise), 2, madv, SBX_SC_N(madv));
    return rc < 0 ? rc : seccomp_rule_add(c, SCMP_ACT_ERRNO(0), SCMP_SYS(readahead), 0);
}

/* RLIMIT_CORE is 1 (sbx_rlimits.c), the one value for which the kernel starts no core_pattern
 * pipe helper; a job lowering it to 0 would get the helper back, so setting RLIMIT_CORE is
 * answered 0 and does nothing (programs that "disable core dumps" keep working). A
 * core_pattern socket (`@/path`, Linux 6.16) checks no limit at all, only that the process is
 * dumpable: the job's main process makes itself non-dumpable (sbx_user.c), and making itself
 * dumpable again, prctl(PR_SET_DUMPABLE, non-zero), gets EPERM. */
static int sbx_sc_core(scmp_filter_ctx c)
{
    const sbx_sc_val core = {RLIMIT_CORE, SCMP_ACT_ERRNO(0)};
    const struct scmp_arg_cmp set_new[2] = {sbx_sc_low32(1, RLIMIT_CORE), SCMP_CMP(2, SCMP_CMP_NE, 0)};
    const struct scmp_arg_cmp dumpable[2] = {sbx_sc_low32(0, PR_SET_DUMPABLE),
                                             SCMP_CMP(1, SCMP_CMP_NE, 0)};
    int rc = sbx_sc_values(c, SCMP_SYS(setrlimit), 0, &core, 1);
    if (rc == 0) /* prlimit64(pid, resource, new, old): reading (new == NULL) stays allowed */
        rc = seccomp_rule_add_array(c, SCMP_ACT_ERRNO(0), SCMP_SYS(prlimit64), 2, set_new);
    if (rc == 0)
        rc = seccomp_rule_add_array(c, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(prctl), 2, dumpable);
    return rc;
}

/* The variant being built, [0] exec or [1] zygote mode (sbx_sc_build): pthread_once's
 * callback takes no argument. */
static int sbx_sc_variant;

/* Inodes every job shares — the one anonymous inode behind every eventfd, timerfd, signalfd
 * and epoll descriptor, the namespace files of namespaces jobs share (/proc/self/ns/user), in
 * zygote mode the host's zygote binary (/proc/self/exe) — would carry a lock one job holds to
 * another job that probes it: a covert channel (a lock's range even carries a number). So
 * taking a lock does nothing and says it worked: flock, and fcntl's F_SETLK, F_SETLKW and
 * their open-file-description forms (F_GETLK still asks, and finds no job's lock). A job's
 * own processes do not exclude each other through locks either (docs/security-model.md).
 * Watching an inode for changes is the same channel the other way (an inotify watch on
 * /proc/self/exe saw other jobs start): inotify is on the EPERM list, and so is dnotify,
 * fcntl(F_NOTIFY). */
static int sbx_sc_shared_inodes(scmp_filter_ctx c)
{
    const sbx_sc_val fcntl_cmds[] = {{F_SETLK, SCMP_ACT_ERRNO(0)},
                                     {F_SETLKW, SCMP_ACT_ERRNO(0)},
                                     {F_OFD_SETLK, SCMP_ACT_ERRNO(0)},
                                     {F_OFD_SETLKW, SCMP_ACT_ERRNO(0)},
                                     {F_NOTIFY, SCMP_ACT_ERRNO(EPERM)}};
    int rc = seccomp_rule_add(c, SCMP_ACT_ERRNO(0), SCMP_SYS(flock), 0);
    return rc < 0 ? rc : sbx_sc_values(c, SCMP_SYS(fcntl), 1, fcntl_cmds, 5);
}

/* Exec mode (the job may execve the binaries /usr has): its writable file systems are noexec,
 * but a memfd is not, and execve("/proc/self/fd/N") of one runs any binary the job wrote
 * there (Linux 6.3's vm.memfd_noexec is not in Debian 12's kernel): memfd_create gets EPERM.
 * Zygote mode refuses execve itself. Also in both: the name of a thread (PR_SET_NAME) is
 * shown raw in the host's kernel log when the process crashes, so setting it does nothing;
 * and same-page merging, a timing channel to other jobs where the host enables KSM, is
 * refused (madvise MERGEABLE does nothing, PR_SET_MEMORY_MERGE gets EPERM). */
static int sbx_sc_own_code(scmp_filter_ctx c)
{
    const sbx_sc_val prctls[] = {{PR_SET_NAME, SCMP_ACT_ERRNO(0)},
                                 {67 /* PR_SET_MEMORY_MERGE, Linux 6.4 */, SCMP_ACT_ERRNO(EPERM)}};
    const sbx_sc_val merge = {MADV_MERGEABLE, SCMP_ACT_ERRNO(0)};
    int rc = sbx_sc_values(c, SCMP_SYS(prctl), 0, prctls, 2);
    if (rc == 0)
        rc = sbx_sc_values(c, SCMP_SYS(madvise), 2, &merge, 1);
    if (rc == 0 && sbx_sc_variant == 0)
        rc = seccomp_rule_add(c, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(memfd_create), 0);
    return rc;
}

/* Memory a job would hold that no memory cgroup charges to it. Huge pages of the host's
 * hugetlb pool (v1 has a hugetlb controller of its own, which codeq does not use; v2 charges
 * them only with the memory_hugetlb_accounting mount option): a job that maps them holds host
 * memory beyond its memory limit, can take the whole pool from the host's users of it, and
 * tells other jobs how much of it is left (a channel). So asking for them gets EPERM: mmap
 * with MAP_HUGETLB, memfd_create with MFD_HUGETLB, shmget with SHM_HUGETLB. Transparent huge
 * pages are ordinary memory, charged like any other, and stay allowed. And names of anonymous
 * mappings (prctl PR_SET_VMA, Linux 5.17, where CONFIG_ANON_VMA_NAME is set, as in Debian's
 * kernels): each is a kernel allocation of its own, uncharged, up to one per mapping of each
 * of the job's processes. Nothing a job runs names its mappings. */
static int sbx_sc_uncharged(scmp_filter_ctx c)
{
    const sbx_sc_val vma = {0x53564d41 /* PR_SET_VMA */, SCMP_ACT_ERRNO(EPERM)};
    int rc = seccomp_rule_add(c, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(mmap), 1,
                              SCMP_A3(SCMP_CMP_MASKED_EQ, MAP_HUGETLB, MAP_HUGETLB));
    if (rc == 0)
        rc = seccomp_rule_add(c, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(memfd_create), 1,
                              SCMP_A1(SCMP_CMP_MASKED_EQ, MFD_HUGETLB, MFD_HUGETLB));
    if (rc == 0)
        rc = seccomp_rule_add(c, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(shmget), 1,
                              SCMP_A2(SCMP_CMP_MASKED_EQ, SHM_HUGETLB, SHM_HUGETLB));
    if (rc == 0)
        rc = sbx_sc_values(c, SCMP_SYS(prctl), 0, &vma, 1);
    return rc;
}

/* ioctl: the terminal and descriptor requests (TCGETS 0x5401 to FIOASYNC 0x5452: isatty,
 * the window size, FIONREAD, FIONBIO and FIOCLEX, which CPython's os.set_blocking and
 * set_inheritable use) and nothing else: ENOTTY, the answer of a descriptor that knows no
 * such request, for the rest. Opened through /proc/self/exe, the zygote's binary is a file
 * of the host's disk, and the file-system requests on it read the host: FS_IOC_GETFSMAP its
 * whole map of used and free extents, live, FS_IOC_GETFSSYSFSPATH and GETFSUUID its device,
 * and PIDFD_GET_INFO on a pidfd of the job's pid 1 its credentials and cgroup (a red-team
 * review of 2026-12-06). And EPERM for TIOCSTI, compared on the low 32 bits (the kernel
 * reads the request as an unsigned int; a request with high bits set is beyond 0x5452). */
static int sbx_sc_ioctl(scmp_filter_ctx c)
{
    const sbx_sc_val tiocsti = {TIOCSTI, SCMP_ACT_ERRNO(EPERM)};
    int rc = seccomp_rule_add(c, SCMP_ACT_ERRNO(ENOTTY), SCMP_SYS(ioctl), 1,
                              SCMP_A1(SCMP_CMP_LT, TCGETS));
    if (rc == 0)
        rc = seccomp_rule_add(c, SCMP_ACT_ERRNO(ENOTTY), SCMP_SYS(ioctl), 1,
                              SCMP_A1(SCMP_CMP_GT, FIOASYNC));
    return rc < 0 ? rc : sbx_sc_values(c, SCMP_SYS(ioctl), 1, &tiocsti, 1);
}

/* clone with a namespace flag, or with SIGSYS as the exit signal (the low byte), which would
 * reach the parent when the child ends: EPERM. */
static int sbx_sc_clone(scmp_filter_ctx c)
{
    static const scmp_datum_t ns[] = {CLONE_NEWNS,  CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET,
                                      CLONE_NEWIPC, CLONE_NEWUTS,  CLONE_NEWCGROUP};
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < sizeof ns / sizeof ns[0]; i++)
        rc = seccomp_rule_add(c, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,
                              SCMP_A0(SCMP_CMP_MASKED_EQ, ns[i], ns[i]));
    if (rc == 0)
        rc = seccomp_rule_add(c, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,
                              SCMP_A0(SCMP_CMP_MASKED_EQ, CSIGNAL, SIGSYS));
    return rc;
}

/* socket and socketpair of any family but AF_UNIX: EPERM. */
static int sbx_sc_sockets(scmp_filter_ctx c)
{
    int rc = 0;
    const int calls[] = {SCMP_SYS(socket), SCMP_SYS(socketpair)};
    for (size_t i = 0; rc == 0 && i < 2; i++)
        rc = seccomp_rule_add(c, SCMP_ACT_ERRNO(EPERM), calls[i], 1,
                              SCMP_A0(SCMP_CMP_NE, AF_UNIX));
    return rc;
}

/* The calls the values filter looks into: allowed here, each refused value refused there. */
static const char *const sbx_sc_allow_values[] = {
    "ioctl",   "clone",        "socket",  "socketpair",        "kill",
    "tkill",   "tgkill",       "rt_sigqueueinfo", "rt_tgsigqueueinfo", "pidfd_send_signal",
    "prctl",   "fcntl",        "timer_create",    "mq_notify",         "fadvise64",
    "madvise", "setrlimit",    "prlimit64",       "flock",
};

/* The rest of the calls filter: personality only with the default persona or the query
 * (anything else is the default kill), and clone3 answered ENOSYS. */
static int sbx_sc_calls_args(scmp_filter_ctx c)
{
    int rc = seccomp_rule_add(c, SCMP_ACT_ALLOW, SCMP_SYS(personality), 1, sbx_sc_low32(0, 0));
    if (rc == 0) /* PER_LINUX, and 0xffffffff which only asks */
        rc = seccomp_rule_add(c, SCMP_ACT_ALLOW, SCMP_SYS(personality), 1,
                              sbx_sc_low32(0, 0xffffffffu));
    if (rc == 0)
        rc = seccomp_rule_add(c, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
    return rc;
}

/* Per mode — [0] exec mode, [1] zygote mode, where the job's interpreter is already running
 * and execve/execveat get EPERM (no shell, no binaries; subprocess fails cleanly) — two
 * programs, loaded in this order: the values filter (its default allows, so it does not stop
 * the second load), then the calls filter, which refuses `seccomp` itself. The third is the
 * calls filter with the kernel's kill for its default, for a worker whose runtime already
 * listens to a seccomp filter of its own (LXD's system call interception, sysbox): the kernel
 * allows one listener per process, and there the filter with ours fails with EBUSY. Then a
 * refused call kills the calling process only, and the verdict sees it only where pid 1 reaps
 * it (the SIGSYS count, sbx_verdict.c). */
enum { SBX_SC_VALUES, SBX_SC_CALLS, SBX_SC_CALLS_KILL };
static struct sock_fprog sbx_sc_progs[2][SBX_SECCOMP_FILTERS];
static char sbx_sc_errors[2][160];
static pthread_once_t sbx_sc_onces[2] = {PTHREAD_ONCE_INIT, PTHREAD_ONCE_INIT};

static bool sbx_sc_is_exec(const char *name)
{
    return strcmp(name, "execve") == 0 || strcmp(name, "execveat") == 0;
}

/* Exports the BPF through a memfd: libseccomp 2.5 has no export-to-memory. */
static int sbx_sc_export(scmp_filter_ctx c, struct sock_fprog *prog)
{
    int fd = memfd_create("codeq-seccomp", MFD_CLOEXEC);
    if (fd < 0)
        return -errno;
    int rc = seccomp_export_bpf(c, fd);
    off_t len = rc == 0 ? lseek(fd, 0, SEEK_END) : -1;
    void *buf = len > 0 ? malloc((size_t)len) : NULL;
    if (rc == 0 && (!buf || pread(fd, buf, (size_t)len, 0) != len))
        rc = -EIO;
    close(fd);
    if (rc < 0) {
        free(buf);
        return rc;
    }
    prog->len = (unsigned short)((size_t)len / sizeof(struct sock_filter));
    prog->filter = buf; /* kept for the life of the process */
    return 0;
}

/* A binary tree over the syscall numbers instead of one compare per rule in a row: the same
 * decisions, but a call walks ~10 compares instead of up to ~300, and so does the kernel's own
 * pass over every syscall number when the filter is loaded (its action cache, built with
 * interrupts off: ~0.2 ms of each job's start with the linear form). */
/* Other architectures get the default action too: the values filter's allow leaves them to the
 * calls filter. */
static scmp_filter_ctx sbx_sc_new(uint32_t def, const char **step)
{
    *step = "seccomp_init";
    scmp_filter_ctx c = seccomp_init(def);
    if (!c)
        return NULL;
    *step = "seccomp_attr_set(ACT_BADARCH)";
    if (seccomp_attr_set(c, SCMP_FLTATR_ACT_BADARCH, def) == 0) {
        *step = "seccomp_attr_set(CTL_OPTIMIZE)";
        if (seccomp_attr_set(c, SCMP_FLTATR_CTL_OPTIMIZE, 2) == 0)
            return c;
    }
    seccomp_release(c);
    return NULL;
}

static int sbx_sc_names(scmp_filter_ctx c, uint32_t action, const char *const *names, size_t n,
                        const char **step)
{
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < n; i++)
        if (!(action == SCMP_ACT_ALLOW && sbx_sc_variant && sbx_sc_is_exec(names[i])) &&
            (rc = sbx_sc_name(c, action, names[i])) < 0)
            *step = names[i];
    return rc;
}


/* Which calls: everything not listed kills the process. */
static int sbx_sc_calls(scmp_filter_ctx c, const char **step)
{
    int rc = sbx_sc_names(c, SCMP_ACT_ALLOW, sbx_sc_allow, SBX_SC_N(sbx_sc_allow), step);
    if (rc == 0)
        rc = sbx_sc_names(c, SCMP_ACT_ALLOW, sbx_sc_allow_values, SBX_SC_N(sbx_sc_allow_values),
                          step);
    static const char *const exec[] = {"execve", "execveat"};
    if (rc == 0 && sbx_sc_variant)
        rc = sbx_sc_names(c, SCMP_ACT_ERRNO(EPERM), exec, 2, step);
    if (rc == 0)
        rc = sbx_sc_names(c, SCMP_ACT_ERRNO(EPERM), sbx_sc_deny, SBX_SC_N(sbx_sc_deny), step);
    if (rc == 0 && (rc = sbx_sc_calls_args(c)) < 0)
        *step = "personality/clone3 rules";
    return rc;
}

/* Which argument values of allowed calls: everything not listed is allowed here. */
static int sbx_sc_values_rules(scmp_filter_ctx c, const char **step)
{
    static const struct {
        int (*add)(scmp_filter_ctx);
        const char *what;
    } rules[] = {{sbx_sc_ioctl, "ioctl rules"},   {sbx_sc_clone, "clone rules"},
                 {sbx_sc_sockets, "socket rules"}, {sbx_sc_signals, "SIGSYS rules"},
                 {sbx_sc_cache, "page cache rules"}, {sbx_sc_core, "core dump rules"},
                 {sbx_sc_shared_inodes, "lock rules"}, {sbx_sc_own_code, "memfd/prctl rules"},
                 {sbx_sc_uncharged, "uncharged memory rules"}};
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < SBX_SC_N(rules); i++)
        if ((rc = rules[i].add(c)) < 0)
            *step = rules[i].what;
    return rc;
}

static int sbx_sc_build_one(int which, const char **step)
{
    static const uint32_t def[] = {SCMP_ACT_ALLOW, SCMP_ACT_NOTIFY, SCMP_ACT_KILL_PROCESS};
    scmp_filter_ctx c = sbx_sc_new(def[which], step);
    if (!c)
        return -ENOMEM;
    int rc = which == SBX_SC_VALUES ? sbx_sc_values_rules(c, step) : sbx_sc_calls(c, step);
    if (rc == 0 && (rc = sbx_sc_export(c, &sbx_sc_progs[sbx_sc_variant][which])) < 0)
        *step = "seccomp_export_bpf";
    seccomp_release(c);
    return rc;
}

static void sbx_sc_build(void)
{
    const char *step = "";
    int rc = 0;
    for (int which = 0; rc == 0 && which < SBX_SECCOMP_FILTERS; which++)
        rc = sbx_sc_build_one(which, &step);
    if (rc < 0)
        snprintf(sbx_sc_errors[sbx_sc_variant], sizeof sbx_sc_errors[0], "seccomp filter: %s: %s",
                 step, strerrordesc_np(-rc) ? strerrordesc_np(-rc) : "unknown error");
}

static void sbx_sc_build_exec(void)
{
    sbx_sc_variant = 0;
    sbx_sc_build();
}

static void sbx_sc_build_noexec(void)
{
    sbx_sc_variant = 1;
    sbx_sc_build();
}

static int sbx_seccomp_prepare(sbx_proc *p)
{
    if (!p->use_seccomp)
        return 0;
    static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER; /* sbx_sc_variant is shared */
    int v = p->inproc ? 1 : 0;
    pthread_mutex_lock(&mu);
    pthread_once(&sbx_sc_onces[v], v ? sbx_sc_build_noexec : sbx_sc_build_exec);
    pthread_mutex_unlock(&mu);
    if (!sbx_sc_progs[v][SBX_SC_CALLS].filter)
        return sbx_fail(p, 0, "%s", sbx_sc_errors[v]);
    p->seccomp_prog = sbx_sc_progs[v];
    return 0;
}

/* Last step before execve: no_new_privs is already set (sbx_user.c), which the kernel
 * requires of a process without CAP_SYS_ADMIN. The calls filter's listener goes to the
 * supervisor and is closed here: a job holding it could answer its own refused calls. */
static int sbx_seccomp_enter_main(sbx_proc *p)
{
    if (!p->seccomp_prog)
        return 0;
    const struct sock_fprog *prog = p->seccomp_prog;
    if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog[SBX_SC_VALUES]) < 0)
        return sbx_child_fail(p, errno, "seccomp(SECCOMP_SET_MODE_FILTER): values filter", NULL);
    int fd = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER,
                          &prog[SBX_SC_CALLS]);
    if (fd < 0 && errno == EBUSY) /* a listener above us: the kernel's kill instead */
        fd = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog[SBX_SC_CALLS_KILL]);
    if (fd < 0)
        return sbx_child_fail(p, errno, "seccomp(SECCOMP_SET_MODE_FILTER): calls filter", NULL);
    /* The supervisor takes no listener as none: the channel's EOF, or no 'n' message. */
    int rc = fd > 0 ? sbx_send_fds(p->self_init ? SBX_FD_CTL : p->sc_chan[1], 'n', &fd, 1) : 0;
    int err = errno;
    if (fd > 0)
        close(fd);
    if (!p->self_init) {
        close(p->sc_chan[0]);
        close(p->sc_chan[1]);
    }
    return rc < 0 ? sbx_child_fail(p, err, "sendmsg(seccomp listener to the supervisor)", NULL) : 0;
}

bool sbx_seccomp_listen(int *listener, sbx_init_main_proc *m)
{
    struct pollfd f = {.fd = *listener, .events = POLLIN};
    if (f.fd < 0 || poll(&f, 1, 0) <= 0)
        return false;
    if (!(f.revents & POLLIN)) /* POLLHUP: no process under the filter is left */
        goto done;
    /* Room beyond the struct this was built with, should a newer kernel's be larger; the
     * kernel wants it zeroed. */
    union {
        struct seccomp_notif n;
        char room[256];
    } req;
    memset(&req, 0, sizeof req);
    if (ioctl(*listener, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0) {
        if (errno == ENOENT || errno == EINTR) /* ENOENT: the caller died meanwhile */
            return false;
        goto done;
    }
    if (!m->refused.seen)
        m->refused = (sbx_sc_refused){.seen = 1, .nr = req.n.data.nr, .arch = req.n.data.arch};
    return true;
done:
    close(*listener);
    *listener = -1;
    return false;
}

void sbx_seccomp_name(const sbx_sc_refused *r, char *buf, size_t len)
{
    char *name = seccomp_syscall_resolve_num_arch(r->arch, r->nr);
    if (r->arch == seccomp_arch_native())
        snprintf(buf, len, "%s (%d)", name ? name : "?", (int)r->nr);
    else
        snprintf(buf, len, "%s (%d) of architecture 0x%x", name ? name : "?", (int)r->nr,
                 (unsigned)r->arch);
    free(name);
}

const sbx_layer sbx_layer_seccomp = {
    .name = "seccomp",
    .prepare = sbx_seccomp_prepare,
    .enter_main = sbx_seccomp_enter_main,
};
