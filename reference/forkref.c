/*
 * forkref: the cost of fork() with many children alive, as a minimal C
 * loop to hold scalebench's `fork` and `fork-static` benchmarks against
 * (scripts/compare-reference).
 *
 *   forkref N
 *
 * Forks N children one after the other. Each child writes one byte to a
 * pipe it shares with the parent and then waits (blocked reading a pipe
 * nobody writes to) until it is killed, so that N children are alive at
 * the end. The time of child i runs from one clock_gettime(CLOCK_MONOTONIC)
 * just before fork() to one just after the parent has read the child's
 * byte: fork, the child's first run and its write. Prints one line of
 * three integers, in ns:
 *
 *   median  median of the first 10 %  median of the last 10 %
 *
 * (a median of an even count is the lower of the two middle values).
 *
 * scripts/compare-reference runs it pinned to one CPU (taskset -c 0), as
 * scalebench pins its runs; then what a child does before it blocks is in
 * the time too. Left to the scheduler, parent and child may run on two
 * CPUs, and on a VM waking an idle vCPU took up to 4 ms here.
 *
 * At the end, and whenever something fails half-way or SIGINT, SIGTERM or
 * SIGHUP arrives, every child is killed (SIGKILL) and reaped before forkref
 * exits. On Linux each child also asks to be killed when forkref ends
 * (prctl PR_SET_PDEATHSIG, after its byte is written), so that not even
 * SIGKILL of forkref leaves children behind.
 *
 * Build: gcc -O2 -o forkref forkref.c
 *        gcc -O2 -static -o forkref-static forkref.c   (a static forker:
 *        the child has fewer mappings to copy)
 * POSIX apart from the Linux-only prctl, which is left out elsewhere.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

/* The children forked so far, for the cleanup (also from a signal), and
 * the process that forks them. */
static pid_t *kids;
static volatile sig_atomic_t nkids;
static pid_t forker;

static long long now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* Kills and reaps every child; async-signal-safe. */
static void kill_all(void)
{
    for (sig_atomic_t i = 0; i < nkids; i++)
        kill(kids[i], SIGKILL);
    for (sig_atomic_t i = 0; i < nkids; i++)
        while (waitpid(kids[i], NULL, 0) < 0 && errno == EINTR)
            ;
    nkids = 0;
}

static void on_signal(int sig)
{
    if (getpid() == forker) /* not in a child that has yet to write */
        kill_all();
    signal(sig, SIG_DFL);
    raise(sig);
}

/* Reports a failure, kills and reaps the children, exits 1. */
static void fail(const char *what, long i, long n)
{
    int e = errno;
    fprintf(stderr, "forkref: %s for child %ld of %ld: %s\n", what, i + 1, n,
            strerror(e));
    if (e == EAGAIN && strcmp(what, "fork()") == 0)
        fprintf(stderr, "forkref: (a process limit: RLIMIT_NPROC, "
                        "kernel.pid_max, kernel.threads-max or pids.max of "
                        "the cgroup)\n");
    kill_all();
    exit(1);
}

/* What a child does: its byte, then wait to be killed, blocked reading
 * `idle`, a pipe nobody writes to. */
static void child(int wfd, int idle, pid_t parent)
{
    char b = 'x';
    while (write(wfd, &b, 1) < 0 && errno == EINTR)
        ;
#ifdef __linux__
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent)
        _exit(0);
#else
    (void)parent;
#endif
    for (;;) {
        ssize_t r = read(idle, &b, 1);
        if (r == 0 || (r < 0 && errno != EINTR))
            _exit(0);
    }
}

/* Calls once every library function a child calls before it blocks, so
 * that the children inherit them resolved: with lazy binding (gcc's
 * default on Debian) each child would otherwise go through the dynamic
 * linker for them, and when parent and child share a CPU everything the
 * child does before it blocks is in the time. On the development machine
 * that was 10-20 % of it. */
static int warm_up(int p[2])
{
    char b = 'x';
    now_ns();
    if (write(p[1], &b, 1) != 1 || read(p[0], &b, 1) != 1)
        return -1;
    getppid();
#ifdef __linux__
    int sig;
    prctl(PR_GET_PDEATHSIG, &sig);
#endif
    return 0;
}

static int cmp_ll(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return (x > y) - (x < y);
}

/* The lower median of v[0..n), n > 0; sorts v in place. */
static long long median(long long *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_ll);
    return v[(n - 1) / 2];
}

int main(int argc, char **argv)
{
    char *end;
    long n = argc == 2 ? strtol(argv[1], &end, 10) : 0;
    if (argc != 2 || *argv[1] == '\0' || *end != '\0' || n < 1 ||
        n > 1000000) {
        fprintf(stderr, "usage: forkref N   (N children, 1 to 1000000)\n");
        return 2;
    }
    kids = malloc((size_t)n * sizeof *kids);
    long long *t = malloc((size_t)n * sizeof *t);
    int p[2], idle[2];
    if (kids == NULL || t == NULL) {
        perror("forkref: malloc");
        return 1;
    }
    if (pipe(p) != 0 || pipe(idle) != 0 || warm_up(p) != 0) {
        perror("forkref: pipe");
        return 1;
    }
    forker = getpid();
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigfillset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    for (long i = 0; i < n; i++) {
        char b;
        long long t0 = now_ns();
        pid_t pid = fork();
        if (pid == 0)
            child(p[1], idle[0], forker);
        if (pid < 0)
            fail("fork()", i, n);
        ssize_t r;
        while ((r = read(p[0], &b, 1)) < 0 && errno == EINTR)
            ;
        long long t1 = now_ns();
        /* Recorded after the clock: since the fork, the first write to a
         * page is a copy-on-write fault, not part of what is timed. A
         * signal meanwhile misses this child, which then ends with
         * forkref (PR_SET_PDEATHSIG) on Linux. */
        kids[nkids] = pid;
        nkids = nkids + 1;
        if (r != 1) {
            if (r == 0)
                errno = EPIPE;
            fail("reading the byte", i, n);
        }
        t[i] = t1 - t0;
    }
    kill_all();
    size_t tenth = (size_t)n / 10 > 0 ? (size_t)n / 10 : 1;
    /* The tenths first: median() sorts what it is given. */
    long long first = median(t, tenth);
    long long last = median(t + (size_t)n - tenth, tenth);
    long long all = median(t, (size_t)n);
    printf("%lld %lld %lld\n", all, first, last);
    return 0;
}
