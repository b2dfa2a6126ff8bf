/* test_sandbox_confine: each confinement layer proven from inside a real job and from the host.
 *
 * Identity, file system view, kernel surface (seccomp), cgroup figures and limits, input
 * files and artifacts, profiles and the start-up self-check. Every hostile job runs through
 * sbx_run/sbx_start only. Host-side checks: no process and no cgroup of this process's jobs
 * is left after them (test_nothing_left runs last, and after the bombs).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <poll.h>
#include <seccomp.h>
#include <sys/sysmacros.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sandbox.h"
#include "test_scale.h"

static char g_root[64];
static sbx_config g_cfg;

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static sbx_job job_of(const char *code)
{
    sbx_job j = {.code = code, .code_len = strlen(code), .job_id = "confine"};
    scaled_limits_default(&j.limits);
    return j;
}

static void expect_status(const sbx_result *r, sbx_status want)
{
    if (r->status != want)
        print_message("status %s (want %s) exit %d signal %d message [%s]\nstdout: %.600s\n"
                      "stderr: %.900s\n",
                      sbx_status_name(r->status), sbx_status_name(want), r->exit_code, r->signal,
                      r->message, r->out.data ? r->out.data : "", r->err.data ? r->err.data : "");
    assert_int_equal(r->status, want);
}

static void run_ok(const char *code, const char *want_out)
{
    sbx_job j = job_of(code);
    sbx_result r;
    sbx_run(&g_cfg, &j, &r);
    expect_status(&r, SBX_OK);
    if (strcmp(r.out.data, want_out) != 0)
        print_message("stdout: %s\nwant:   %s\n", r.out.data, want_out);
    assert_string_equal(r.out.data, want_out);
    sbx_result_free(&r);
}

/* Host processes in a job cgroup of this test process (every process of our jobs is in one:
 * the init is attached before it starts anything). Other test runners' jobs, which share the
 * uid range, are not counted. */
static int job_procs_left(void)
{
    char mark[48];
    snprintf(mark, sizeof mark, "/codeq/job-%d-", (int)getpid());
    DIR *d = opendir("/proc");
    assert_non_null(d);
    int n = 0;
    static char buf[4096];
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (!isdigit((unsigned char)e->d_name[0]))
            continue;
        char path[300];
        snprintf(path, sizeof path, "/proc/%s/cgroup", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        size_t k = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[k] = '\0';
        if (strstr(buf, mark))
            n++;
    }
    closedir(d);
    return n;
}

static bool cgroup_v2(void)
{
    struct statfs fs;
    return statfs("/sys/fs/cgroup", &fs) == 0 && fs.f_type == CGROUP2_SUPER_MAGIC;
}

/* On v2, where this process's job cgroups are made (sbx_cgroup2.c decides: our own cgroup,
 * or the hierarchy's root), read from a job's own /proc/self/cgroup: "0::/<dir>/job-...". */
static const char *v2_job_parent(void)
{
    static char dir[512];
    if (dir[0])
        return dir;
    sbx_job j = job_of("print(open('/proc/self/cgroup').read().strip())\n");
    sbx_result r;
    sbx_run(&g_cfg, &j, &r);
    expect_status(&r, SBX_OK);
    char *slash = strrchr(r.out.data, '/');
    assert_non_null(slash);
    assert_memory_equal(r.out.data, "0::/", 4);
    assert_memory_equal(slash, "/job-", 5);
    snprintf(dir, sizeof dir, "/sys/fs/cgroup/%.*s", (int)(slash - r.out.data - 4), r.out.data + 4);
    sbx_result_free(&r);
    return dir;
}

/* Job cgroups of this process left in any v1 hierarchy (or the v2 tree). */
static int job_cgroups_left(void)
{
    const char *dirs[] = {"/sys/fs/cgroup/memory/codeq", "/sys/fs/cgroup/pids/codeq",
                          "/sys/fs/cgroup/cpu/codeq", "/sys/fs/cgroup/cpuacct/codeq",
                          "/sys/fs/cgroup/blkio/codeq"};
    size_t ndirs = access(dirs[4], F_OK) == 0 ? 5 : 4;
    if (cgroup_v2()) {
        dirs[0] = v2_job_parent();
        ndirs = 1;
    }
    char prefix[32];
    snprintf(prefix, sizeof prefix, "job-%d-", (int)getpid());
    int n = 0;
    for (size_t i = 0; i < ndirs; i++) {
        DIR *d = opendir(dirs[i]);
        assert_non_null(d); /* jobs ran, so their parent exists */
        for (struct dirent *e; (e = readdir(d)) != NULL;)
            if (strncmp(e->d_name, prefix, strlen(prefix)) == 0)
                n++;
        closedir(d);
    }
    return n;
}

/* ---- identity ---- */

static void test_identity(void **state)
{
    (void)state;
    run_ok("import os\n"
           "f = dict(l.split(':', 1) for l in open('/proc/self/status').read().splitlines())\n"
           "u = os.getuid()\n"
           "print(61000 <= u < 62000, os.getgid() == u, os.getgroups())\n"
           "for k in ('CapInh', 'CapPrm', 'CapEff', 'CapBnd', 'CapAmb', 'NoNewPrivs', 'Seccomp'):\n"
           "    print(k, f[k].strip())\n"
           "try:\n"
           "    os.setuid(0)\n"
           "except PermissionError as e:\n"
           "    print('setuid', e.errno)\n",
           "True True []\nCapInh 0000000000000000\nCapPrm 0000000000000000\n"
           "CapEff 0000000000000000\nCapBnd 0000000000000000\nCapAmb 0000000000000000\n"
           "NoNewPrivs 1\nSeccomp 2\nsetuid 1\n");
}

/* ---- file system view ---- */

static void test_fs_view(void **state)
{
    (void)state;
    run_ok("import os\n"
           "print(sorted(os.listdir('/')))\n"
           "print(sorted(os.listdir('/etc')), sorted(os.listdir('/dev')))\n"
           "print([os.path.exists(p) for p in ('/etc/shadow', '/root', '/home', '/var', '/tmp/codeq',"
           " '/boot', '/sys', '/run')])\n"
           "for p in ('/x', '/etc/x', '/usr/x', '/lib/x', '/dev/x', '/proc/x'):\n"
           "    try:\n"
           "        open(p, 'w')\n"
           "    except OSError as e:\n"
           "        print(p, e.strerror)\n"
           "open('/tmp/t', 'w').write('t'); open('/dev/shm/s', 'w').write('s')\n"
           "print(sorted((l.split()[4], l.split()[5].split(',')[0]) for l in"
           " open('/proc/self/mountinfo') if l.split()[4] in ('/', '/usr', '/dev', '/proc', '/work',"
           " '/etc/alternatives')))\n"
           "print(os.getcwd(), os.environ['HOME'], oct(os.stat('/work').st_mode & 0o777),"
           " os.stat('/work').st_uid == os.getuid(), os.listdir('/tmp'))\n"
           "print(open('/etc/passwd').read().split(':')[0], len(open('/dev/urandom', 'rb').read(9)))\n"
           "print(sorted(l.split()[4] for l in open('/proc/self/mountinfo')))\n",
           "['bin', 'dev', 'etc', 'lib', 'lib64', 'proc', 'sbin', 'tmp', 'usr', 'work']\n"
           "['alternatives', 'group', 'hostname', 'passwd'] ['fd', 'full', 'null', 'random', 'shm', 'stderr', "
           "'stdin', 'stdout', 'urandom', 'zero']\n"
           "[False, False, False, False, False, False, False, False]\n"
           "/x Read-only file system\n/etc/x Read-only file system\n/usr/x Read-only file system\n"
           "/lib/x Read-only file system\n/dev/x Read-only file system\n"
           "/proc/x No such file or directory\n"
           "[('/', 'ro'), ('/dev', 'ro'), ('/etc/alternatives', 'ro'), ('/proc', 'ro'), ('/usr', 'ro'),"
           " ('/work', 'rw')]\n"
           "/work /work 0o700 True ['t']\nroot 9\n"
           /* every mount the job has: the scratch tmpfs the binds come from is not one */
           "['/', '/dev', '/dev/shm', '/etc/alternatives', '/proc', '/tmp', '/usr', '/work']\n");
}

static void test_tmpfs_full(void **state)
{
    (void)state;
    sbx_job j = job_of("import errno\n"
                       "f = open('/tmp/fill', 'wb')\n"
                       "try:\n"
                       "    for i in range(64):\n"
                       "        f.write(b'x' * (1 << 20)); f.flush()\n"
                       "except OSError as e:\n"
                       "    print(errno.errorcode[e.errno], i)\n");
    j.limits.tmpfs_mb = 8;
    j.limits.file_mb = 64;
    sbx_result r;
    sbx_run(&g_cfg, &j, &r);
    expect_status(&r, SBX_OK);
    assert_memory_equal(r.out.data, "ENOSPC ", 7);
    assert_true(atoi(r.out.data + 7) <= 8);
    sbx_result_free(&r);
}

/* Files of one job are invisible to another running at the same time. */
static void test_jobs_isolated(void **state)
{
    (void)state;
    sbx_job a = job_of("import fcntl, sys, time\n"
                       "for p in ('/tmp/a-secret', '/dev/shm/a-secret', '/work/a-secret'):\n"
                       "    open(p, 'w').write('s')\n"
                       "locks = [open(p) for p in (sys.executable, '/dev/null')]\n"
                       "for f in locks:\n"
                       "    fcntl.flock(f, fcntl.LOCK_EX)\n"
                       "print('written', flush=True)\n"
                       "time.sleep(1.5)\n");
    /* Also no channel through file locks on what both see (the interpreter, /dev/null). */
    sbx_job b = job_of("import fcntl, os, sys, time\n"
                       "time.sleep(0.7)\n"
                       "print(os.listdir('/tmp'), os.listdir('/dev/shm'), sorted(os.listdir('.')),"
                       " [x for x in os.listdir('/proc') if x.isdigit()])\n"
                       "for p in (sys.executable, '/dev/null'):\n"
                       "    fcntl.flock(open(p), fcntl.LOCK_EX | fcntl.LOCK_NB)\n"
                       "print('locks free')\n");
    sbx_proc *ps[2] = {sbx_start(&g_cfg, &a), sbx_start(&g_cfg, &b)};
    uint64_t end = now_ms() + 10000;
    while (now_ms() < end && !(sbx_done(ps[0]) && sbx_done(ps[1]))) {
        struct pollfd fds[8];
        int k = sbx_pollfds(ps[0], fds, 4);
        k += sbx_pollfds(ps[1], fds + k, 4);
        poll(fds, (nfds_t)k, 50);
        sbx_service(ps[0]);
        sbx_service(ps[1]);
    }
    sbx_result ra, rb;
    sbx_finish(ps[0], &ra);
    sbx_finish(ps[1], &rb);
    expect_status(&ra, SBX_OK);
    expect_status(&rb, SBX_OK);
    assert_string_equal(ra.out.data, "written\n");
    assert_string_equal(rb.out.data, "[] [] ['main.py'] ['2']\nlocks free\n");
    sbx_result_free(&ra);
    sbx_result_free(&rb);
}

/* ---- kernel surface ---- */

static void test_kernel_surface(void **state)
{
    (void)state;
    run_ok("import ctypes, errno, socket, threading\n"
           "libc = ctypes.CDLL(None, use_errno=True)\n"
           "libc.syscall.restype = ctypes.c_long\n"
           "def sc(*a):\n"
           "    r = libc.syscall(*[ctypes.c_long(x) if isinstance(x, int) else x for x in a])\n"
           "    return errno.errorcode.get(ctypes.get_errno()) if r < 0 else r\n"
           "print('clone3', sc(435, 0, 0))\n"
           "print('mount', sc(165, b'none', b'/tmp', b'tmpfs', 0, 0))\n"
           "print('umount2', sc(166, b'/proc', 2))\n"
           "print('pivot_root', sc(155, b'/tmp', b'/tmp'))\n"
           "print('unshare', sc(272, 0x10000000), 'setns', sc(308, 0, 0))\n"
           "print('ptrace', sc(101, 16, 1, 0, 0))\n"
           "print('bpf', sc(321, 0, 0, 0), 'perf', sc(298, 0, 0, -1, -1, 0))\n"
           "print('keyctl', sc(250, 0), 'add_key', sc(248, 0, 0, 0, 0, 0))\n"
           "print('userfaultfd', sc(323, 0), 'io_uring', sc(425, 1, 0))\n"
           "print('vm_readv', sc(310, 1, 0, 0, 0, 0, 0), 'kexec', sc(246, 0, 0, 0, 0))\n"
           "print('tiocsti', sc(16, 0, 0x5412, b'x'), sc(16, 0, 0x7fffffff00005412, b'x'))\n"
           "print('clone newns', sc(56, 0x20000 | 17, 0, 0, 0, 0))\n"
           "print('syslog', sc(103, 3, 0, 0), 'setaffinity', sc(203, 0, 0, 0))\n"
           "for fam in (socket.AF_INET, socket.AF_INET6, socket.AF_PACKET, 40):\n"
           "    try:\n"
           "        socket.socket(fam, socket.SOCK_DGRAM)\n"
           "    except OSError as e:\n"
           "        print(fam, errno.errorcode[e.errno])\n"
           "a, b = socket.socketpair(); a.send(b'u'); print('unix', b.recv(1))\n"
           "out = []\n"
           "ts = [threading.Thread(target=out.append, args=(i,)) for i in range(16)]\n"
           "[t.start() for t in ts]; [t.join() for t in ts]\n"
           "print('threads', len(out))\n",
           "clone3 ENOSYS\nmount EPERM\numount2 EPERM\npivot_root EPERM\n"
           "unshare EPERM setns EPERM\nptrace EPERM\nbpf EPERM perf EPERM\n"
           "keyctl EPERM add_key EPERM\nuserfaultfd EPERM io_uring EPERM\n"
           "vm_readv EPERM kexec EPERM\ntiocsti EPERM EPERM\nclone newns EPERM\n"
           "syslog EPERM setaffinity EPERM\n"
           "2 EPERM\n10 EPERM\n17 EPERM\n40 EPERM\nunix b'u'\nthreads 16\n");
}

static void test_seccomp_violation(void **state)
{
    (void)state;
    /* setxattr is on no list: the default action kills the process. */
    sbx_job j = job_of("import ctypes\n"
                       "print('before', flush=True)\n"
                       "ctypes.CDLL(None).syscall(188, b'/work/main.py', b'user.x', b'v', 1, 0)\n"
                       "print('after')\n");
    sbx_result r;
    sbx_run(&g_cfg, &j, &r);
    expect_status(&r, SBX_SECCOMP);
    assert_int_equal(r.signal, SIGSYS);
    assert_string_equal(r.out.data, "before\n");
    assert_non_null(strstr(r.message, "forbidden system call"));
    assert_string_equal(sbx_status_name(r.status), "seccomp_violation");
    sbx_result_free(&r);

    /* i386 system calls (int 0x80) are another architecture: killed as well. */
    j = job_of("import ctypes, mmap\n"
               "code = b'\\xb8\\x14\\x00\\x00\\x00\\xcd\\x80\\xc3'  # mov eax, 20 (getpid); int 0x80; ret\n"
               "m = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)\n"
               "m.write(code)\n"
               "addr = ctypes.addressof(ctypes.c_char.from_buffer(m))\n"
               "print('pid', ctypes.CFUNCTYPE(ctypes.c_int)(addr)())\n");
    sbx_run(&g_cfg, &j, &r);
    expect_status(&r, SBX_SECCOMP);
    assert_int_equal(r.signal, SIGSYS);
    sbx_result_free(&r);
}

/* Under a runtime that already listens to a seccomp filter of its own (LXD's system call
 * interception, sysbox), the kernel refuses the calls filter a listener of its own (EBUSY): the
 * job still runs, under the calls filter that kills instead, and a refused call in its main
 * process is still seccomp_violation. The runtime is played by a child of this test that loads
 * such a filter (acct notifies; nothing calls it) and runs the job. */
static void test_seccomp_under_a_listening_runtime(void **state)
{
    (void)state;
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        scmp_filter_ctx c = seccomp_init(SCMP_ACT_ALLOW);
        if (!c || seccomp_rule_add(c, SCMP_ACT_NOTIFY, SCMP_SYS(acct), 0) < 0 ||
            seccomp_load(c) < 0 || seccomp_notify_fd(c) < 0)
            _exit(3);
        sbx_job j = job_of("import ctypes\n"
                           "print('before', flush=True)\n"
                           "ctypes.CDLL(None).syscall(188, b'/work/main.py', b'user.x', b'v', 1, 0)\n");
        sbx_result r;
        sbx_run(&g_cfg, &j, &r);
        if (r.status != SBX_SECCOMP || r.signal != SIGSYS || strcmp(r.out.data, "before\n") != 0) {
            fprintf(stderr, "status %s message [%s] stdout [%s]\n", sbx_status_name(r.status),
                    r.message, r.out.data);
            _exit(1);
        }
        _exit(0);
    }
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
}

/* ---- cgroup ---- */

static void test_cgroup_usage(void **state)
{
    (void)state;
    sbx_job j = job_of("x = bytearray(20 * 1024 * 1024)\nprint(len(x))\n");
    sbx_result r;
    sbx_run(&g_cfg, &j, &r);
    expect_status(&r, SBX_OK);
    /* The job's peak: its 20 MB and the interpreter, never the worker's memory. */
    assert_in_range(r.max_rss_kb, 20 * 1024, 45 * 1024);
    assert_string_equal(r.profile, "full");
    sbx_result_free(&r);

    /* Threads no longer count against memory by their reserved stacks (RLIMIT_AS did). */
    j = job_of("import threading, time\n"
               "ts = [threading.Thread(target=time.sleep, args=(0.2,)) for _ in range(30)]\n"
               "[t.start() for t in ts]; [t.join() for t in ts]\n"
               "print('ok')\n");
    sbx_run(&g_cfg, &j, &r);
    expect_status(&r, SBX_OK);
    sbx_result_free(&r);
}

/* A job that prints whether a child it forks is in its own cgroups, then those cgroups: every
 * v1 hierarchy with a limit, or the v2 tree. */
static sbx_job cgroup_job(bool v2)
{
    static char code[600];
    snprintf(code, sizeof code,
             "import os\n"
             "def groups():\n"
             "    g = {}\n"
             "    for l in open('/proc/self/cgroup'):\n"
             "        _, ctls, path = l.rstrip('\\n').split(':', 2)\n"
             "        g.update((c or 'v2', path) for c in ctls.split(','))\n" /* cpu,cpuacct co-mounted */
             "    return g\n"
             "g = groups()\n"
             "pid = os.fork()\n"
             "if pid == 0:\n"
             "    os._exit(0 if groups() == g else 1)\n"
             "_, st = os.waitpid(pid, 0)\n"
             "print(st, *[k + '=' + g[k] for k in %s])\n",
             v2 ? "('v2',)" : "('memory', 'pids', 'cpu', 'cpuacct')");
    return job_of(code);
}

/* 0 when cgroup_job ran and reported its processes in a job cgroup of this process, else -1
 * with the reason printed. Not asserts: test_cgroup_without_clone3 calls it in a child. */
static int cgroup_job_placed(const sbx_result *r, bool v2)
{
    char want[600];
    if (v2) /* under the parent the backend chose, which the job reports: check it is a job's */
        snprintf(want, sizeof want, "%s/job-%d-", v2_job_parent() + strlen("/sys/fs/cgroup"),
                 (int)getpid());
    else
        snprintf(want, sizeof want, "/codeq/job-%d-", (int)getpid());
    const char *at = r->status == SBX_OK && r->out.data ? r->out.data : "";
    bool ok = strncmp(at, "0 ", 2) == 0;
    for (int i = 0; ok && i < (v2 ? 1 : 4); i++) {
        at = strchr(at, '=');
        ok = at && strncmp(++at, want, strlen(want)) == 0;
    }
    /* and on v2 that place is codeq's own: <base>/codeq */
    ok = ok && (!v2 || strcmp(strrchr(v2_job_parent(), '/'), "/codeq") == 0);
    if (!ok)
        print_message("status %s message [%s]\nstdout: %s\nwant every group under %s\n",
                      sbx_status_name(r->status), r->message, r->out.data ? r->out.data : "", want);
    return ok ? 0 : -1;
}

/* The init is in the job's cgroup before it goes (sbx_cgroup.c, sbx_cgroup2.c): the job's main
 * process and a child it forks are in job-<this pid>-<n> in every v1 hierarchy with a limit,
 * or in the v2 tree, none in the host's. On v2 the init was born there (clone3 with
 * CLONE_INTO_CGROUP, sbx_spawn.c), never moved; on v1 it joined. */
static void test_cgroup_joined(void **state)
{
    (void)state;
    bool v2 = cgroup_v2();
    sbx_job j = cgroup_job(v2);
    sbx_result r;
    sbx_run(&g_cfg, &j, &r);
    expect_status(&r, SBX_OK);
    assert_int_equal(r.cgroup_born, v2);
    assert_int_equal(cgroup_job_placed(&r, v2), 0);
    sbx_result_free(&r);
}

/* Where clone3 answers ENOSYS (kernels before 5.3, container runtimes whose seccomp profile
 * refuses it, valgrind) or E2BIG (5.3-5.6: no CLONE_INTO_CGROUP yet), the init is cloned the
 * old way and attached: the job still runs in its cgroup. A child of this test filters clone3
 * for itself with each answer, then runs the job. */
static void cgroup_without_clone3(int answer)
{
    bool v2 = cgroup_v2();
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
        if (!ctx || seccomp_rule_add(ctx, SCMP_ACT_ERRNO(answer), SCMP_SYS(clone3), 0) < 0 ||
            seccomp_load(ctx) < 0)
            _exit(2);
        seccomp_release(ctx);
        sbx_job j = cgroup_job(v2);
        sbx_result r;
        sbx_run(&g_cfg, &j, &r);
        int rc = r.cgroup_born ? 3 : cgroup_job_placed(&r, v2) < 0 ? 4 : 0;
        sbx_result_free(&r);
        char why[256];
        sbx_host host = {.cgroup_born = true};
        if (rc == 0 && (sbx_selfcheck(&g_cfg, &host, why, sizeof why) < 0 || host.cgroup_born))
            rc = 5; /* the worker would not warn that its jobs are attached */
        _exit(rc);
    }
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        print_message("clone3 -> %s: child: wait status %#x (2: no filter, 3: born in its "
                      "cgroup anyway, 4: not in its cgroup, 5: the self-check says born)\n",
                      strerrorname_np(answer), st);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
}

static void test_cgroup_without_clone3(void **state)
{
    (void)state;
    cgroup_without_clone3(ENOSYS);
    cgroup_without_clone3(E2BIG);
}

/* The whole disk behind /usr as "MAJ:MIN" (a partition's parent), or false when /usr is on no
 * block device (tmpfs, overlay, the cgroup v2 guest's 9p: nothing to throttle). */
static bool usr_disk(char *out, size_t n)
{
    struct stat st;
    char path[128], buf[32];
    if (stat("/usr", &st) < 0 || major(st.st_dev) == 0)
        return false;
    snprintf(path, sizeof path, "/sys/dev/block/%u:%u", major(st.st_dev), minor(st.st_dev));
    if (access(path, F_OK) < 0)
        return false;
    snprintf(out, n, "%u:%u", major(st.st_dev), minor(st.st_dev));
    snprintf(path, sizeof path, "/sys/dev/block/%s/partition", out);
    if (access(path, F_OK) < 0)
        return true;
    snprintf(path, sizeof path, "/sys/dev/block/%s/../dev", out);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    assert_non_null(fgets(buf, sizeof buf, f));
    fclose(f);
    buf[strcspn(buf, "\n")] = '\0';
    snprintf(out, n, "%s", buf);
    return true;
}

/* The job's I/O limits are on its cgroup, for the disk behind /usr, while it runs: v1's
 * blkio.throttle.read_bps_device and write_iops_device, or v2's io.max (the abuse case
 * 87_io_flood measures the rate itself). */
static void test_io_throttle(void **state)
{
    (void)state;
    char disk[32], want[160], path[1200], buf[512] = "";
    bool v2 = cgroup_v2();
    if (!usr_disk(disk, sizeof disk) ||
        (!v2 && access("/sys/fs/cgroup/blkio/blkio.throttle.read_bps_device", F_OK) < 0)) {
        /* The cgroup v2 guest's root is 9p: nothing to throttle, said as a skip, not a pass
         * (abuse case 87 checks there that such a job still runs). */
        print_message("skipped: /usr is on no block device, or no blkio hierarchy\n");
        skip();
    }
    const char *dir = v2 ? v2_job_parent() : "/sys/fs/cgroup/blkio/codeq";
    sbx_job j = job_of("import time\ntime.sleep(1)\n");
    j.limits.io_read_bps = 4194304;
    j.limits.io_write_iops = 177;
    sbx_proc *p = sbx_start(&g_cfg, &j);
    assert_non_null(p);
    char prefix[32];
    snprintf(prefix, sizeof prefix, "job-%d-", (int)getpid());
    bool seen = false;
    while (!sbx_done(p)) {
        DIR *d = seen ? NULL : opendir(dir);
        for (struct dirent *e; d && (e = readdir(d)) != NULL;)
            if (strncmp(e->d_name, prefix, strlen(prefix)) == 0) {
                snprintf(path, sizeof path, "%s/%s/%s", dir, e->d_name,
                         v2 ? "io.max" : "blkio.throttle.read_bps_device");
                FILE *f = fopen(path, "r");
                size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
                buf[n] = '\0';
                if (f)
                    fclose(f);
                if (v2 && !f) { /* no io controller delegated: no io.max, nothing to check */
                    print_message("skipped: no io.max in %s\n", path);
                    snprintf(buf, sizeof buf, "skipped");
                }
                if (v2 && f)
                    snprintf(want, sizeof want, "%s rbps=4194304 wbps=%u riops=%u wiops=177", disk,
                             j.limits.io_write_bps, j.limits.io_read_iops);
                else
                    snprintf(want, sizeof want, "%s 4194304", disk);
                seen = true;
            }
        if (d)
            closedir(d);
        struct pollfd fds[8];
        poll(fds, (nfds_t)sbx_pollfds(p, fds, 8), 20);
        sbx_service(p);
    }
    sbx_result r;
    sbx_finish(p, &r);
    expect_status(&r, SBX_OK);
    sbx_result_free(&r);
    assert_true(seen);
    if (strcmp(buf, "skipped") == 0)
        skip(); /* a v2 host without the io controller delegated: no io.max to read */
    if (!strstr(buf, want))
        print_message("%s: [%s], want a line [%s]\n", path, buf, want);
    assert_non_null(strstr(buf, want));
}

/* A job cgroup directory job-<pid>-7 in `parent`, made directly (as a killed worker leaves
 * it); its path in out. */
static void make_job_cgroup(const char *parent, pid_t pid, char *out, size_t n)
{
    snprintf(out, n, "%s/job-%d-7", parent, (int)pid);
    assert_int_equal(mkdir(out, 0755) == 0 || errno == EEXIST, 1);
}

static pid_t dead_pid(void)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        _exit(0);
    assert_int_equal(waitpid(pid, NULL, 0), pid);
    return pid;
}

/* sbx_cgroup_sweep removes exactly the empty job cgroups of creators that are gone: not one of
 * a live creator, and not one that still has a process in it. v1: in every hierarchy. */
static void test_cgroup_sweep(void **state)
{
    (void)state;
    bool v2 = cgroup_v2();
    const char *mem = v2 ? v2_job_parent() : "/sys/fs/cgroup/memory/codeq";
    const char *pids = v2 ? mem : "/sys/fs/cgroup/pids/codeq";
    assert_true(access(mem, F_OK) == 0); /* jobs ran */
    char stale_mem[600], stale_pids[600], live[600], busy[600], tasks[640];
    pid_t gone = dead_pid(), gone2 = dead_pid(), gone3 = dead_pid();
    make_job_cgroup(mem, gone, stale_mem, sizeof stale_mem);
    make_job_cgroup(pids, v2 ? gone3 : gone, stale_pids, sizeof stale_pids);
    make_job_cgroup(mem, getpid(), live, sizeof live);
    make_job_cgroup(mem, gone2, busy, sizeof busy);
    int pipefd[2];
    assert_int_equal(pipe(pipefd), 0);
    pid_t sleeper = fork();
    if (sleeper == 0) {
        char c;
        close(pipefd[1]);
        _exit(read(pipefd[0], &c, 1) < 0);
    }
    close(pipefd[0]);
    snprintf(tasks, sizeof tasks, "%s/cgroup.procs", busy);
    FILE *f = fopen(tasks, "w");
    assert_non_null(f);
    fprintf(f, "%d\n", (int)sleeper);
    assert_int_equal(fclose(f), 0);

    assert_true(sbx_cgroup_sweep(&g_cfg) >= 1);
    assert_int_equal(access(stale_mem, F_OK), -1);
    assert_int_equal(access(stale_pids, F_OK), -1);
    assert_int_equal(access(live, F_OK), 0);  /* its creator (this process) is alive */
    assert_int_equal(access(busy, F_OK), 0);  /* never removed while a process is in it */
    assert_true(kill(sleeper, 0) == 0);       /* and nothing is killed */

    close(pipefd[1]);
    assert_int_equal(waitpid(sleeper, NULL, 0), sleeper);
    sbx_cgroup_sweep(&g_cfg);
    assert_int_equal(access(busy, F_OK), -1); /* empty now: collected */
    assert_int_equal(rmdir(live), 0);
}

/* Two processes each under the limit, together above it: one is OOM-killed. */
static void test_oom_two_processes(void **state)
{
    (void)state;
    sbx_job j = job_of("import os, time\n"
                       "pid = os.fork()\n"
                       "x = bytearray(30 * 1024 * 1024)\n"
                       "time.sleep(0.5)\n"
                       "if pid:\n"
                       "    os.waitpid(pid, 0)\n");
    sbx_result r;
    sbx_run(&g_cfg, &j, &r);
    expect_status(&r, SBX_MEMORY_LIMIT);
    assert_string_equal(r.message, "memory limit 50 MB exceeded (cgroup OOM kill)");
    sbx_result_free(&r);
}

static void test_pids_limit(void **state)
{
    (void)state;
    /* The children sleep past the job's wall limit: a sandbox that waited for them would
     * answer timeout, whatever the machine's speed. */
    sbx_limits max;
    sbx_limits_max(&max);
    uint32_t wall_ms = scaled_ms(5000, max.wall_ms);
    char code[512];
    snprintf(code, sizeof code,
             "import os, time\n"
             "kids, failed = [], 0\n"
             "for i in range(100):\n"
             "    try:\n"
             "        pid = os.fork()\n"
             "    except BlockingIOError:\n"
             "        failed += 1\n"
             "        continue\n"
             "    if pid == 0:\n"
             "        time.sleep(%u)\n"
             "        os._exit(0)\n"
             "    kids.append(pid)\n"
             "print(len(kids) < 64, failed > 0)\n",
             2 * wall_ms / 1000);
    sbx_job j = job_of(code);
    j.limits.wall_ms = wall_ms;
    sbx_result r;
    sbx_run(&g_cfg, &j, &r);
    expect_status(&r, SBX_OK);
    assert_string_equal(r.out.data, "True True\n");
    assert_true(r.wall_ms < wall_ms); /* the sleeping children died with the job */
    sbx_result_free(&r);
}

static void test_fork_bomb(void **state)
{
    (void)state;
    sbx_job j = job_of("import os\n"
                       "while True:\n"
                       "    try:\n"
                       "        os.fork()\n"
                       "    except OSError:\n"
                       "        pass\n");
    j.limits.wall_ms = 2000;
    uint64_t t0 = now_ms();
    sbx_proc *p = sbx_start(&g_cfg, &j);
    assert_non_null(p);
    int seen = 0; /* the scan below does see the job's processes while it runs */
    while (!sbx_done(p) && now_ms() < t0 + 10000) {
        if (!seen) /* before the job can end: a busy machine may let it run out of memory fast */
            seen = job_procs_left() > 1;
        struct pollfd fds[4];
        poll(fds, (nfds_t)sbx_pollfds(p, fds, 4), seen ? 100 : 5);
        sbx_service(p);
    }
    sbx_result r;
    sbx_finish(p, &r);
    uint64_t took = now_ms() - t0;
    if (!seen)
        print_message("fork bomb: no scan saw its processes; %s after %llu ms [%s]\n",
                      sbx_status_name(r.status), (unsigned long long)took, r.message);
    /* It ends at the wall limit, or earlier if its 64 interpreters outgrow the memory limit. */
    if (r.status != SBX_MEMORY_LIMIT)
        expect_status(&r, SBX_TIMEOUT);
    assert_true(seen);
    assert_true(took < 2000 + 2500); /* the wall limit, and teardown within the grace */
    sbx_result_free(&r);
    assert_int_equal(job_procs_left(), 0);
    assert_int_equal(job_cgroups_left(), 0);
}

/* RLIMIT_CPU is per process; the cgroup total stops a job of many busy processes. */
static void test_total_cpu(void **state)
{
    (void)state;
    sbx_job j = job_of("import os\n"
                       "for i in range(3):\n"
                       "    if os.fork() == 0:\n"
                       "        break\n"
                       "while True:\n"
                       "    pass\n");
    j.limits.cpu_ms = 1000;
    j.limits.wall_ms = 30000;
    sbx_result r;
    sbx_run(&g_cfg, &j, &r);
    expect_status(&r, SBX_TIMEOUT);
    assert_string_equal(r.message, "cpu time limit 1000 ms exceeded");
    assert_true(r.cpu_ms >= 1000);
    /* At the limit, not at the next whole second: four busy processes under one CPU's quota
     * can pass it by at most what they burn before the next poll. */
    if (r.cpu_ms > 1000 + 200 * time_scale())
        print_message("cpu_ms %llu at a 1000 ms limit\n", (unsigned long long)r.cpu_ms);
    assert_true(r.cpu_ms <= 1000 + 200 * time_scale());
    assert_true(r.wall_ms < 30000);
    sbx_result_free(&r);
}

/* A job that kills itself with SIGXCPU has not hit the CPU limit. */
static void test_fake_cpu_signal(void **state)
{
    (void)state;
    sbx_job j = job_of("import os, signal\nos.kill(os.getpid(), signal.SIGXCPU)\n");
    sbx_result r;
    sbx_run(&g_cfg, &j, &r);
    expect_status(&r, SBX_SIGNAL);
    assert_int_equal(r.signal, SIGXCPU);
    sbx_result_free(&r);
}

static void test_sigstop_then_timeout(void **state)
{
    (void)state;
    sbx_job j = job_of("import os, signal\nos.kill(os.getpid(), signal.SIGSTOP)\n");
    j.limits.wall_ms = 1000;
    sbx_result r;
    sbx_run(&g_cfg, &j, &r);
    expect_status(&r, SBX_TIMEOUT);
    assert_true(r.wall_ms < 1000 + 2000 * time_scale()); /* a stopped job is still killed */
    sbx_result_free(&r);
}

/* ---- input files and artifacts ---- */

static void test_files_and_artifacts(void **state)
{
    (void)state;
    sbx_file in[] = {{.path = "data.txt", .data = "abc", .len = 3},
                     {.path = "sub/dir/n.bin", .data = "\0\1\2", .len = 3},
                     {.path = "keep.txt", .data = "same", .len = 4}};
    sbx_job j = job_of("import os\n"
                       "print(open('data.txt').read(), open('sub/dir/n.bin', 'rb').read(),"
                       " os.stat('data.txt').st_uid == os.getuid())\n"
                       "open('data.txt', 'a').write('def')\n"
                       "open('out.txt', 'w').write('result')\n"
                       "open('bin.dat', 'wb').write(b'\\xff\\x00')\n"
                       "os.symlink('/etc/passwd', 'link')\n"
                       "open('h1', 'w').write('h'); os.link('h1', 'h2')\n"
                       "os.mkfifo('fifo')\n");
    j.files = in;
    j.nfiles = 3;
    sbx_result r;
    sbx_run(&g_cfg, &j, &r);
    expect_status(&r, SBX_OK);
    assert_string_equal(r.out.data, "abc b'\\x00\\x01\\x02' True\n");
    /* Changed input and new files; not the unchanged inputs, nor link, h1/h2, fifo. */
    assert_int_equal(r.nartifacts, 3);
    assert_string_equal(r.artifacts[0].path, "bin.dat");
    assert_int_equal(r.artifacts[0].len, 2);
    assert_memory_equal(r.artifacts[0].data, "\xff\x00", 2);
    assert_string_equal(r.artifacts[1].path, "data.txt");
    assert_string_equal(r.artifacts[1].data, "abcdef");
    assert_string_equal(r.artifacts[2].path, "out.txt");
    assert_string_equal(r.artifacts[2].data, "result");
    assert_true(r.artifacts_truncated);
    sbx_result_free(&r);

    /* Caps: at most artifact_files files and artifact_bytes bytes, first by path. */
    j = job_of("for n in 'abcde':\n    open(n, 'w').write(n * 100)\n");
    j.limits.artifact_files = 3;
    j.limits.artifact_bytes = 250;
    sbx_run(&g_cfg, &j, &r);
    expect_status(&r, SBX_OK);
    assert_int_equal(r.nartifacts, 2);
    assert_string_equal(r.artifacts[0].path, "a");
    assert_string_equal(r.artifacts[1].path, "b");
    assert_true(r.artifacts_truncated);
    sbx_result_free(&r);

    /* Artifacts are kept when the job times out. */
    j = job_of("import time\nopen('partial.txt', 'w').write('p')\ntime.sleep(30)\n");
    j.limits.wall_ms = 800 * time_scale(); /* time to start and write first */
    sbx_run(&g_cfg, &j, &r);
    expect_status(&r, SBX_TIMEOUT);
    assert_int_equal(r.nartifacts, 1);
    assert_string_equal(r.artifacts[0].path, "partial.txt");
    sbx_result_free(&r);
}

static void test_files_check(void **state)
{
    (void)state;
    sbx_limits l;
    sbx_limits_default(&l);
    char why[128];
    const struct {
        const char *path, *want;
    } bad[] = {
        {"../x", "files[0].path: '', '.' and '..' components are not allowed"},
        {"a/../../x", "files[0].path: '', '.' and '..' components are not allowed"},
        {"/etc/passwd", "files[0].path: absolute"},
        {"a//b", "files[0].path: '', '.' and '..' components are not allowed"},
        {"a/", "files[0].path: ends with '/'"},
        {"", "files[0].path: empty"},
        {"main.py", "files[0].path: main.py is reserved"},
        {"main.py/x", "files[0].path: main.py/x is reserved"},
        {"_codeq_prelude.py/x", "files[0].path: _codeq_prelude.py/x is reserved"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        sbx_file f = {.path = bad[i].path, .data = "", .len = 0};
        assert_int_equal(sbx_files_check(&f, 1, 0, 0, &l, why, sizeof why), -1);
        assert_string_equal(why, bad[i].want);
    }
    sbx_file two[] = {{.path = "a", .data = "", .len = 0}, {.path = "a", .data = "", .len = 0}};
    assert_int_equal(sbx_files_check(two, 2, 0, 0, &l, why, sizeof why), -1);
    assert_string_equal(why, "files[1].path: duplicate of files[0]");
    /* A file and a path inside it, in either order: staging could write only one of them. */
    const char *nested[][2] = {{"a", "a/b"}, {"a/b/c", "a/b"}, {"d/e", "d/e/f/g"}};
    for (size_t i = 0; i < sizeof nested / sizeof nested[0]; i++) {
        sbx_file pair[] = {{.path = nested[i][0], .data = "", .len = 0},
                           {.path = nested[i][1], .data = "", .len = 0}};
        assert_int_equal(sbx_files_check(pair, 2, 0, 0, &l, why, sizeof why), -1);
        assert_non_null(strstr(why, "both a file and a directory"));
    }
    sbx_file ok[] = {{.path = "a/b/c.txt", .data = "x", .len = 1}, {.path = ".hidden", .data = "", .len = 0},
                     {.path = "a/b/c.txt2", .data = "", .len = 0}, {.path = "a/bc", .data = "", .len = 0},
                     {.path = "main.py2", .data = "", .len = 0}};
    assert_int_equal(sbx_files_check(ok, 5, 0, 0, &l, why, sizeof why), 0);

    /* The tmpfs stores each file in whole pages, main.py and the prelude beside them: 64
     * files of 3 pages and a byte (768 KiB of data) and a main.py need 257 pages of 1 MiB's
     * 256. Staging them used to fail half-way with ENOSPC (internal_error). */
    long page = sysconf(_SC_PAGESIZE);
    sbx_limits small = l;
    small.tmpfs_mb = 1;
    static char blob[1 << 20];
    sbx_file many[SBX_MAX_FILES];
    char names[SBX_MAX_FILES][8];
    for (int i = 0; i < SBX_MAX_FILES; i++) {
        snprintf(names[i], sizeof names[i], "f%d", i);
        many[i] = (sbx_file){.path = names[i], .data = blob, .len = (size_t)(3 * page + 1)};
    }
    assert_int_equal(sbx_files_check(many, SBX_MAX_FILES, 0, 0, &small, why, sizeof why), 0);
    assert_int_equal(sbx_files_check(many, SBX_MAX_FILES, 9, 0, &small, why, sizeof why), -1);
    assert_non_null(strstr(why, "files: above limits.tmpfs_mb 1: "));
    many[0].len = (size_t)(3 * page); /* one page less: fits again */
    assert_int_equal(sbx_files_check(many, SBX_MAX_FILES, 9, 0, &small, why, sizeof why), 0);
    /* ... and the prelude counts as main.py does */
    assert_int_equal(sbx_files_check(many, SBX_MAX_FILES, 9, 1, &small, why, sizeof why), -1);

    /* The count matches the kernel's: a file that takes every page main.py leaves runs; a
     * byte more is refused before anything is staged. */
    const char *code = "print(len(open('big', 'rb').read()))\n";
    sbx_job jb = job_of(code);
    jb.limits.tmpfs_mb = 1;
    sbx_file big = {.path = "big", .data = blob, .len = (size_t)((1 << 20) - page)};
    jb.files = &big;
    jb.nfiles = 1;
    sbx_result rb;
    sbx_run(&g_cfg, &jb, &rb);
    expect_status(&rb, SBX_OK);
    char want[32];
    snprintf(want, sizeof want, "%ld\n", (1L << 20) - page);
    assert_string_equal(rb.out.data, want);
    sbx_result_free(&rb);
    big.len++;
    sbx_run(&g_cfg, &jb, &rb);
    expect_status(&rb, SBX_INTERNAL);
    assert_non_null(strstr(rb.message, "codeq: sandbox: files: above limits.tmpfs_mb 1: "));
    assert_non_null(strstr(rb.message, "need 1028 KiB"));
    sbx_result_free(&rb);

    /* sbx_start refuses them too: internal_error, nothing runs. */
    sbx_job j = job_of("print('ran')\n");
    sbx_file f = {.path = "../escape", .data = "x", .len = 1};
    j.files = &f;
    j.nfiles = 1;
    sbx_result r;
    sbx_run(&g_cfg, &j, &r);
    expect_status(&r, SBX_INTERNAL);
    assert_string_equal(r.message, "codeq: sandbox: files[0].path: '', '.' and '..' components "
                                   "are not allowed");
    assert_int_equal(r.out.len, 0);
    sbx_result_free(&r);
}

/* ---- profiles and the self-check ---- */

static void test_profiles(void **state)
{
    (void)state;
    sbx_config c = g_cfg;
    c.profile = "nonsense";
    sbx_job j = job_of("print('ran')\n");
    sbx_result r;
    sbx_run(&c, &j, &r);
    expect_status(&r, SBX_INTERNAL);
    assert_string_equal(r.message, "codeq: sandbox: unknown sandbox profile 'nonsense'");
    sbx_result_free(&r);

    /* no-cgroup: stated in the result; memory bounded per process by RLIMIT_AS instead. */
    c.profile = "no-cgroup";
    j = job_of("x = bytearray(200 * 1024 * 1024)\n");
    sbx_run(&c, &j, &r);
    expect_status(&r, SBX_MEMORY_LIMIT);
    assert_string_equal(r.profile, "no-cgroup");
    assert_string_equal(r.message, "memory limit 50 MB exceeded (MemoryError)");
    sbx_result_free(&r);
}

static void test_selfcheck(void **state)
{
    (void)state;
    char why[256] = "";
    sbx_host host = {.cgroup_version = -1};
    if (sbx_selfcheck(&g_cfg, &host, why, sizeof why) != 0)
        print_message("%s\n", why);
    assert_int_equal(sbx_selfcheck(&g_cfg, &host, why, sizeof why), 0);
    /* what the worker's start-up log says: this host's hierarchy, and the clone3 path on v2 */
    assert_int_equal(host.cgroup_version, cgroup_v2() ? 2 : 1);
    assert_int_equal(host.cgroup_born, cgroup_v2());
    sbx_config c = g_cfg;
    c.profile = "no-cgroup";
    assert_int_equal(sbx_selfcheck(&c, &host, why, sizeof why), 0);
    assert_int_equal(host.cgroup_version, 0);
    assert_false(host.cgroup_born);
    c.profile = "no-seccomp";
    assert_int_equal(sbx_selfcheck(&c, NULL, why, sizeof why), 0);
    c.profile = "none";
    assert_int_equal(sbx_selfcheck(&c, NULL, why, sizeof why), -1);
    assert_non_null(strstr(why, "unknown sandbox profile 'none'"));
    c = g_cfg;
    c.python = "/nonexistent/python3";
    assert_int_equal(sbx_selfcheck(&c, NULL, why, sizeof why), -1);
    assert_non_null(strstr(why, "execve(/nonexistent/python3)"));
    /* exec mode's guard module (sbx_seal.c), missing or not loadable; a zygote has it built in */
    c = g_cfg;
    c.isolation = "exec";
    c.seal_path = "/nonexistent/_codeq_seal.so";
    assert_int_equal(sbx_selfcheck(&c, NULL, why, sizeof why), -1);
    assert_string_equal(why, "codeq: sandbox: open(/nonexistent/_codeq_seal.so): No such file or "
                             "directory (self-check job: internal_error)");
    c.seal_path = "/usr/lib/python3.11/os.py";
    assert_int_equal(sbx_selfcheck(&c, NULL, why, sizeof why), -1);
    assert_string_equal(why, "codeq: sandbox: self-check job ended error: _codeq_seal.so does not "
                             "load: /proc/self/fd/5: invalid ELF header\n");
    c.isolation = "zygote";
    assert_int_equal(sbx_selfcheck(&c, NULL, why, sizeof why), 0);
}

static void test_nothing_left(void **state)
{
    (void)state;
    assert_int_equal(job_procs_left(), 0);
    assert_int_equal(job_cgroups_left(), 0);
    DIR *d = opendir(g_root);
    assert_non_null(d);
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        assert_true(e->d_name[0] == '.');
    closedir(d);
}

int main(void)
{
    snprintf(g_root, sizeof g_root, "/tmp/codeq-confine-%d", (int)getpid());
    sbx_config_default(&g_cfg);
    g_cfg.work_root = g_root;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_identity),
        cmocka_unit_test(test_fs_view),
        cmocka_unit_test(test_tmpfs_full),
        cmocka_unit_test(test_jobs_isolated),
        cmocka_unit_test(test_kernel_surface),
        cmocka_unit_test(test_seccomp_violation),
        cmocka_unit_test(test_seccomp_under_a_listening_runtime),
        cmocka_unit_test(test_cgroup_usage),
        cmocka_unit_test(test_cgroup_joined),
        cmocka_unit_test(test_cgroup_without_clone3),
        cmocka_unit_test(test_cgroup_sweep),
        cmocka_unit_test(test_oom_two_processes),
        cmocka_unit_test(test_pids_limit),
        cmocka_unit_test(test_fork_bomb),
        cmocka_unit_test(test_total_cpu),
        cmocka_unit_test(test_fake_cpu_signal),
        cmocka_unit_test(test_sigstop_then_timeout),
        cmocka_unit_test(test_files_and_artifacts),
        cmocka_unit_test(test_files_check),
        cmocka_unit_test(test_profiles),
        cmocka_unit_test(test_selfcheck),
        cmocka_unit_test(test_io_throttle),
        cmocka_unit_test(test_nothing_left),
    };
    int failed = cmocka_run_group_tests_name("test_sandbox_confine", tests, NULL, NULL);
    rmdir(g_root);
    return failed;
}
