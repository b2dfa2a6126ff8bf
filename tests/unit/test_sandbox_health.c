/* test_sandbox_health: the sandbox telling its own failures from the job's, and cleaning up
 * after processes killed mid-job (issue 13).
 *
 * What is proven: sbx_result.unstarted is true when the job's code certainly did not run
 * (a work root that cannot be used: under a regular file, or a full tmpfs; an interpreter
 * that cannot be exec'd; in zygote mode a zygote that cannot start) and false for jobs that
 * ran (ok, exit 1, timeout), for a job refused for its own limits, and for inputs that do
 * not fit the job's own tmpfs. sbx_workdir_sweep
 * removes a staging directory whose creator is gone (a faked one, and a real one left by a
 * process SIGKILLed while its job ran), never one whose creator lives, and never follows a
 * symlink planted inside; while a job runs, only its creator holds the staging directory
 * open (the job's init and main process keep no copy of the lock's descriptor).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sandbox.h"

static char g_root[64];
static sbx_config g_cfg;

static sbx_job job_of(const char *code, uint32_t wall_ms)
{
    sbx_job j = {.code = code, .code_len = strlen(code), .job_id = "health"};
    sbx_limits_default(&j.limits);
    if (wall_ms)
        j.limits.wall_ms = wall_ms;
    return j;
}

static void run_with(const sbx_config *c, const char *code, uint32_t wall_ms, sbx_result *r)
{
    sbx_job j = job_of(code, wall_ms);
    sbx_run(c, &j, r);
}

static void expect(const sbx_result *r, sbx_status want, bool unstarted)
{
    if (r->status != want || r->unstarted != unstarted)
        print_message("status %s (want %s) unstarted %d (want %d) message [%s]\nstderr: %.600s\n",
                      sbx_status_name(r->status), sbx_status_name(want), r->unstarted, unstarted,
                      r->message, r->err.data ? r->err.data : "");
    assert_int_equal(r->status, want);
    assert_int_equal(r->unstarted, unstarted);
}

/* Jobs whose code ran, whatever it did, are never unstarted. */
static void started_jobs(const sbx_config *c)
{
    sbx_result r;
    run_with(c, "print(1)\n", 0, &r);
    expect(&r, SBX_OK, false);
    assert_string_equal(r.out.data, "1\n");
    sbx_result_free(&r);
    run_with(c, "import sys\nsys.exit(1)\n", 0, &r);
    expect(&r, SBX_ERROR, false);
    sbx_result_free(&r);
    run_with(c, "while True:\n    pass\n", 300, &r);
    expect(&r, SBX_TIMEOUT, false);
    sbx_result_free(&r);
}

static void test_exec_started_jobs(void **state)
{
    (void)state;
    started_jobs(&g_cfg);
}

static void test_zygote_started_jobs(void **state)
{
    (void)state;
    sbx_config c = g_cfg;
    c.isolation = "zygote";
    started_jobs(&c);
    sbx_zygote_shutdown();
}

/* The job's own limits are its fault: not unstarted, even though nothing ran. */
static void test_refused_job_is_not_unstarted(void **state)
{
    (void)state;
    sbx_job j = job_of("print(1)\n", 0);
    j.limits.memory_mb = 4096;
    sbx_result r;
    sbx_run(&g_cfg, &j, &r);
    expect(&r, SBX_INTERNAL, false);
    sbx_result_free(&r);
}

/* Inputs that do not fit the job's own tmpfs beside main.py: the job's doing, so not unstarted
 * (running it again would fail the same way). The check counts the tmpfs's pages and main.py,
 * so they are refused before staging; they used to fail in the init's copy-in with ENOSPC,
 * which sbx_child_fail still counts as the job's (a backstop inputs no longer reach). */
static void test_inputs_filling_job_tmpfs_are_not_unstarted(void **state)
{
    (void)state;
    static char data[1 << 20];
    sbx_file f = {.path = "data.bin", .data = data, .len = sizeof data};
    sbx_job j = job_of("print(1)\n", 0);
    j.limits.tmpfs_mb = 1;
    j.files = &f;
    j.nfiles = 1;
    sbx_result r;
    sbx_run(&g_cfg, &j, &r);
    expect(&r, SBX_INTERNAL, false);
    assert_non_null(strstr(r.message, "files: above limits.tmpfs_mb 1: "));
    sbx_result_free(&r);
}

/* The init's setup report (here: execve of the interpreter) comes back as unstarted. */
static void test_exec_failure_is_unstarted(void **state)
{
    (void)state;
    sbx_config c = g_cfg;
    c.python = "/nonexistent/python3";
    sbx_result r;
    run_with(&c, "print(1)\n", 0, &r);
    expect(&r, SBX_INTERNAL, true);
    assert_non_null(strstr(r.message, "execve(/nonexistent/python3)"));
    sbx_result_free(&r);
}

/* A work root below a regular file: mkdir fails with ENOTDIR, in both modes. */
static void test_root_under_file_is_unstarted(void **state)
{
    (void)state;
    char file[96], root[128];
    snprintf(file, sizeof file, "/tmp/codeq-health-file-%d", (int)getpid());
    snprintf(root, sizeof root, "%s/root", file);
    int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    assert_true(fd >= 0);
    close(fd);
    sbx_config c = g_cfg;
    c.work_root = root;
    sbx_result r;
    run_with(&c, "print(1)\n", 0, &r);
    expect(&r, SBX_INTERNAL, true);
    assert_non_null(strstr(r.message, "Not a directory"));
    assert_int_equal(r.out.len, 0);
    sbx_result_free(&r);

    c.isolation = "zygote"; /* no zygote can start there: the job was never handed over */
    run_with(&c, "print(1)\n", 0, &r);
    expect(&r, SBX_INTERNAL, true);
    sbx_result_free(&r);
    sbx_zygote_shutdown();
    assert_int_equal(unlink(file), 0);
}

/* fork() with a pipe from the child: *fd is the write end in the child, the read end here. */
static pid_t fork_piped(int *fd)
{
    int pp[2];
    assert_int_equal(pipe(pp), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    close(pp[pid == 0 ? 0 : 1]);
    *fd = pp[pid == 0 ? 1 : 0];
    return pid;
}

/* A full work root (the "No space left on device"): a 64 KiB tmpfs filled up, in a
 * mount namespace of a forked child so nothing of it is seen outside. The child reports the
 * result's status, unstarted and message on a pipe. */
static void test_full_root_is_unstarted(void **state)
{
    (void)state;
    int pfd;
    pid_t pid = fork_piped(&pfd);
    if (pid == 0) {
        char dir[96], msg[300] = "setup failed";
        snprintf(dir, sizeof dir, "/tmp/codeq-health-full-%d", (int)getpid());
        sbx_result r = {.status = SBX_OK};
        if (unshare(CLONE_NEWNS) == 0 && mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0 &&
            mkdir(dir, 0700) == 0 &&
            mount("tmpfs", dir, "tmpfs", 0, "size=64k,mode=0700") == 0) {
            char fill[128];
            snprintf(fill, sizeof fill, "%s/fill", dir);
            int fd = open(fill, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
            static char block[4096];
            for (int i = 0; fd >= 0 && i < 64 && write(fd, block, sizeof block) > 0; i++)
                ;
            if (fd >= 0)
                close(fd);
            sbx_config c = g_cfg;
            c.work_root = dir;
            run_with(&c, "print('x' * 100)\n", 0, &r);
            snprintf(msg, sizeof msg, "%d %d %s", (int)r.status, (int)r.unstarted, r.message);
            sbx_result_free(&r);
            umount2(dir, MNT_DETACH);
        }
        rmdir(dir);
        ssize_t w = write(pfd, msg, strlen(msg));
        _exit(w > 0 ? 0 : 1);
    }
    char buf[300] = "";
    ssize_t n = read(pfd, buf, sizeof buf - 1);
    close(pfd);
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(n > 0);
    buf[n] = '\0';
    print_message("full work root: %s\n", buf);
    int status = -1, unstarted = -1;
    assert_int_equal(sscanf(buf, "%d %d", &status, &unstarted), 2);
    assert_int_equal(status, SBX_INTERNAL);
    assert_int_equal(unstarted, 1);
    assert_non_null(strstr(buf, "No space left on device"));
}

/* ---- work-root sweep ---- */

static void make_root(char *root, size_t n, const char *what)
{
    snprintf(root, n, "/tmp/codeq-health-%s-%d", what, (int)getpid());
    assert_int_equal(mkdir(root, 0700), 0);
}

static bool exists(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0;
}

static void rm_rf(const char *path)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf -- '%s'", path);
    assert_int_equal(system(cmd), 0);
}

/* A staging directory as a job's creator makes it; lock_fd >= 0 gets the held lock. */
static void make_staging(const char *root, const char *id, char *dir, size_t n, int *lock_fd)
{
    snprintf(dir, n, "%s/job-%s-XXXXXX", root, id);
    assert_non_null(mkdtemp(dir));
    char sub[300];
    snprintf(sub, sizeof sub, "%s/in", dir);
    assert_int_equal(mkdir(sub, 0700), 0);
    snprintf(sub, sizeof sub, "%s/in/main.py", dir);
    FILE *f = fopen(sub, "w");
    assert_non_null(f);
    fputs("print('secret job code')\n", f);
    fclose(f);
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    assert_true(fd >= 0);
    assert_int_equal(flock(fd, LOCK_EX | LOCK_NB), 0);
    *lock_fd = fd;
}

static void test_sweep_only_dead_owners(void **state)
{
    (void)state;
    char root[96], outside[96], live[300], dead[400], link[500], keep[300];
    make_root(root, sizeof root, "sweep");
    make_root(outside, sizeof outside, "outside");
    snprintf(keep, sizeof keep, "%s/keep", outside);
    FILE *f = fopen(keep, "w");
    assert_non_null(f);
    fclose(f);

    int live_fd;
    make_staging(root, "live", live, sizeof live, &live_fd);

    /* The dead one's creator locked it and exited without removing it. */
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int fd;
        make_staging(root, "dead", dead, sizeof dead, &fd);
        _exit(0);
    }
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    DIR *d = opendir(root);
    assert_non_null(d);
    dead[0] = '\0';
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        if (strncmp(e->d_name, "job-dead-", 9) == 0)
            snprintf(dead, sizeof dead, "%s/%s", root, e->d_name);
    closedir(d);
    assert_true(dead[0] != '\0');
    /* Planted inside it: a symlink to a directory of ours, and one at the top level. */
    snprintf(link, sizeof link, "%s/in/escape", dead);
    assert_int_equal(symlink(outside, link), 0);
    snprintf(link, sizeof link, "%s/job-link", root);
    assert_int_equal(symlink(outside, link), 0);

    sbx_config c = g_cfg;
    c.work_root = root;
    assert_int_equal(sbx_workdir_sweep(&c), 1);
    assert_false(exists(dead));
    assert_true(exists(live));
    assert_true(exists(keep));
    assert_true(exists(link)); /* a symlink is not a staging directory: left alone */

    /* Once its creator lets go, the live one is swept too. */
    close(live_fd);
    assert_int_equal(sbx_workdir_sweep(&c), 1);
    assert_false(exists(live));
    assert_int_equal(sbx_workdir_sweep(&c), 0);
    assert_true(exists(keep));
    rm_rf(root);
    rm_rf(outside);
}

/* The pids that have root/<job-...> open (a descriptor linking to a staging directory). */
static int staging_holders(const char *root, pid_t *pids, int max)
{
    int n = 0;
    size_t rl = strlen(root);
    DIR *d = opendir("/proc");
    for (struct dirent *e; d && (e = readdir(d)) != NULL && n < max;) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        char path[300];
        snprintf(path, sizeof path, "/proc/%s/fd", e->d_name);
        DIR *fds = opendir(path);
        bool holds = false;
        for (struct dirent *g; fds && !holds && (g = readdir(fds)) != NULL;) {
            char fdp[600], to[512];
            snprintf(fdp, sizeof fdp, "%s/%s", path, g->d_name);
            ssize_t k = readlink(fdp, to, sizeof to - 1);
            if (k <= 0)
                continue;
            to[k] = '\0';
            /* the staging directory itself (the init's descriptor on its out/ is no lock) */
            holds = strncmp(to, root, rl) == 0 && strncmp(to + rl, "/job-", 5) == 0 &&
                    !strchr(to + rl + 1, '/');
        }
        if (fds)
            closedir(fds);
        if (holds)
            pids[n++] = (pid_t)atoi(e->d_name);
    }
    if (d)
        closedir(d);
    return n;
}

static int count_staging(const char *root)
{
    DIR *d = opendir(root);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d)) != NULL;)
        if (strncmp(e->d_name, "job-", 4) == 0)
            n++;
    if (d)
        closedir(d);
    return n;
}

static pid_t parent_of(pid_t pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    int ppid = 0;
    char *rp = strrchr(buf, ')');
    assert_non_null(rp);
    assert_int_equal(sscanf(rp + 2, "%*c %d", &ppid), 1);
    return (pid_t)ppid;
}

/* While a job runs only its creator holds its staging directory open: the job's init and
 * main process keep no copy of the lock, so the lock dies with the creator. A creator
 * SIGKILLed mid-job leaves the directory; the next sweep takes it. Exec mode: the creator is
 * the worker (here a forked child), the directory is on the host, our sweep takes it. Zygote
 * mode: the creator is the job's supervisor, the directory is in the zygote's private staging
 * tmpfs (seen here through /proc/<zygote>/root), and the zygote's own sweep takes it. */
static void killed_creator(const char *isolation)
{
    bool exec = strcmp(isolation, "exec") == 0;
    char root[96];
    make_root(root, sizeof root, isolation);
    sbx_config c = g_cfg;
    c.work_root = root;
    c.isolation = isolation;
    int pfd;
    pid_t pid = fork_piped(&pfd);
    if (pid == 0) {
        sbx_job j = job_of("import time\ntime.sleep(20)\n", 30000);
        sbx_proc *p = sbx_start(&c, &j);
        char ok = p && !sbx_done(p) ? 'y' : 'n';
        ssize_t w = write(pfd, &ok, 1);
        (void)w;
        for (int i = 0; i < 300; i++) { /* the parent kills us long before */
            struct pollfd fds[4];
            int n = sbx_pollfds(p, fds, 4);
            poll(fds, (nfds_t)n, 100);
            sbx_service(p);
        }
        _exit(1);
    }
    char ok = 0;
    assert_int_equal(read(pfd, &ok, 1), 1);
    close(pfd);
    assert_int_equal(ok, 'y');
    usleep(300 * 1000); /* the job's python is running */
    pid_t holders[8] = {0};
    int nh = 0;
    for (int i = 0; i < 50 && (nh = staging_holders(root, holders, 8)) == 0; i++)
        usleep(20 * 1000);
    print_message("%s: %d process(es) hold the staging directory: %d\n", isolation, nh,
                  (int)holders[0]);
    assert_int_equal(nh, 1);
    if (exec)
        assert_int_equal(holders[0], pid); /* the creator itself, nothing of the job */
    char view[160];
    if (exec)
        snprintf(view, sizeof view, "%s", root);
    else
        snprintf(view, sizeof view, "/proc/%d/root%s", (int)parent_of(holders[0]), root);
    assert_int_equal(count_staging(view), 1);

    /* A live job's directory is never swept (here: ours cannot even see the zygote's). */
    assert_int_equal(sbx_workdir_sweep(&c), 0);
    assert_int_equal(count_staging(view), 1);

    assert_int_equal(kill(holders[0], SIGKILL), 0);
    if (exec) {
        int st;
        assert_int_equal(waitpid(pid, &st, 0), pid);
    }
    int swept = 0;
    for (int i = 0; i < 100 && count_staging(view) > 0; i++) { /* the lock goes with the process */
        if (exec) {
            int k = sbx_workdir_sweep(&c);
            assert_true(k >= 0);
            swept += k;
        }
        if (count_staging(view) > 0)
            usleep(20 * 1000);
    }
    assert_int_equal(count_staging(view), 0);
    if (exec)
        assert_int_equal(swept, 1);
    if (!exec) {
        kill(pid, SIGKILL); /* the "worker": its zygote dies with it */
        int st;
        waitpid(pid, &st, 0);
    }
    usleep(100 * 1000);
    sbx_cgroup_sweep(&c); /* the killed job's cgroup, now that its creator is gone */
    rm_rf(root);
}

static void test_sweep_after_killed_exec_creator(void **state)
{
    (void)state;
    killed_creator("exec");
}

static void test_sweep_after_killed_zygote_supervisor(void **state)
{
    (void)state;
    killed_creator("zygote");
}

int main(void)
{
    snprintf(g_root, sizeof g_root, "/tmp/codeq-health-%d", (int)getpid());
    sbx_config_default(&g_cfg);
    g_cfg.work_root = g_root;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exec_started_jobs),
        cmocka_unit_test(test_zygote_started_jobs),
        cmocka_unit_test(test_refused_job_is_not_unstarted),
        cmocka_unit_test(test_inputs_filling_job_tmpfs_are_not_unstarted),
        cmocka_unit_test(test_exec_failure_is_unstarted),
        cmocka_unit_test(test_root_under_file_is_unstarted),
        cmocka_unit_test(test_full_root_is_unstarted),
        cmocka_unit_test(test_sweep_only_dead_owners),
        cmocka_unit_test(test_sweep_after_killed_exec_creator),
        cmocka_unit_test(test_sweep_after_killed_zygote_supervisor),
    };
    int failed = cmocka_run_group_tests_name("test_sandbox_health", tests, NULL, NULL);
    rmdir(g_root);
    return failed;
}
