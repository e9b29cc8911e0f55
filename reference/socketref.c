/*
 * socketref: the cost of socket() and bind() with many sockets open, as a
 * minimal C loop to hold scalebench's `socket` and `bind` benchmarks
 * against (scripts/compare-reference).
 *
 *   socketref N
 *
 * Opens N sockets with socket(AF_INET, SOCK_STREAM, 0), keeping every one
 * open, then binds each of them to 127.0.0.1 port 0 (all bound after all
 * are opened, as von Leitner's bind benchmark did). Each call is timed
 * alone: one clock_gettime(CLOCK_MONOTONIC) before it and one after,
 * nothing else between. Prints one line of four integers, in ns:
 *
 *   median socket()  median bind()  median socket() of the first 10 %
 *   median socket() of the last 10 %
 *
 * (a median of an even count is the lower of the two middle values). The
 * last two show whether socket() slows down as the table of open
 * descriptors grows. The soft RLIMIT_NOFILE is raised to the hard one when
 * N needs it; beyond the hard limit it says so and exits 1. Every bind()
 * takes a port of its own from the ephemeral range, so N must also fit in
 * that range.
 *
 * Build: gcc -O2 -o socketref socketref.c
 * POSIX (clock_gettime, getrlimit); run here on Linux.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* Descriptors besides the sockets: stdin, stdout, stderr and a margin. */
#define SPARE_FDS 8

static long long now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static int cmp_ll(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return (x > y) - (x < y);
}

/* The lower median of v[0..n), n > 0; sorts a copy. */
static long long median(const long long *v, size_t n)
{
    long long *c = malloc(n * sizeof *c);
    if (c == NULL) {
        perror("socketref: malloc");
        exit(1);
    }
    memcpy(c, v, n * sizeof *c);
    qsort(c, n, sizeof *c, cmp_ll);
    long long m = c[(n - 1) / 2];
    free(c);
    return m;
}

/* Makes room for n sockets under RLIMIT_NOFILE, or exits 1 saying why. */
static void make_room(long n)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0) {
        perror("socketref: getrlimit(RLIMIT_NOFILE)");
        exit(1);
    }
    rlim_t need = (rlim_t)n + SPARE_FDS;
    if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < need) {
        if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < need) {
            fprintf(stderr,
                    "socketref: N = %ld needs %llu open files; the hard "
                    "RLIMIT_NOFILE is %llu (N at most %llu here)\n",
                    n, (unsigned long long)need,
                    (unsigned long long)rl.rlim_max,
                    (unsigned long long)(rl.rlim_max > SPARE_FDS
                                             ? rl.rlim_max - SPARE_FDS
                                             : 0));
            exit(1);
        }
        rl.rlim_cur = rl.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &rl) != 0) {
            perror("socketref: raising RLIMIT_NOFILE to its hard limit");
            exit(1);
        }
    }
}

int main(int argc, char **argv)
{
    char *end;
    long n = argc == 2 ? strtol(argv[1], &end, 10) : 0;
    if (argc != 2 || *argv[1] == '\0' || *end != '\0' || n < 1 ||
        n > 10000000) {
        fprintf(stderr, "usage: socketref N   (N sockets, 1 to 10000000)\n");
        return 2;
    }
    make_room(n);
    int *fd = malloc((size_t)n * sizeof *fd);
    long long *ts = malloc((size_t)n * sizeof *ts);
    long long *tb = malloc((size_t)n * sizeof *tb);
    if (fd == NULL || ts == NULL || tb == NULL) {
        perror("socketref: malloc");
        return 1;
    }
    for (long i = 0; i < n; i++) {
        long long t0 = now_ns();
        fd[i] = socket(AF_INET, SOCK_STREAM, 0);
        long long t1 = now_ns();
        if (fd[i] < 0) {
            fprintf(stderr, "socketref: socket() number %ld of %ld: %s\n",
                    i + 1, n, strerror(errno));
            return 1;
        }
        ts[i] = t1 - t0;
    }
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = 0;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    for (long i = 0; i < n; i++) {
        long long t0 = now_ns();
        int r = bind(fd[i], (struct sockaddr *)&a, sizeof a);
        long long t1 = now_ns();
        if (r != 0) {
            fprintf(stderr,
                    "socketref: bind() number %ld of %ld to 127.0.0.1 port "
                    "0: %s%s\n",
                    i + 1, n, strerror(errno),
                    errno == EADDRINUSE
                        ? " (each socket takes an ephemeral port: N must fit "
                          "in net.ipv4.ip_local_port_range)"
                        : "");
            return 1;
        }
        tb[i] = t1 - t0;
    }
    size_t tenth = (size_t)n / 10 > 0 ? (size_t)n / 10 : 1;
    printf("%lld %lld %lld %lld\n", median(ts, (size_t)n),
           median(tb, (size_t)n), median(ts, tenth),
           median(ts + (size_t)n - tenth, tenth));
    /* The sockets close when the process ends. */
    return 0;
}
