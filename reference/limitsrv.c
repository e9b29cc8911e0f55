/*
 * limitsrv: the ceiling a real HTTP server is compared against
 * (scripts/bench-peers): a server that does nothing but read requests and
 * write one fixed response from memory.
 *
 *   limitsrv PORT NPROC BODY
 *
 * Listens on 127.0.0.1:PORT with NPROC processes, each with a listening
 * socket of its own (SO_REUSEPORT: the kernel spreads the connections)
 * and a level-triggered epoll loop. Every request, whatever its method or
 * path, gets the same "HTTP/1.1 200 OK" with a BODY-byte body, built once
 * at the start and sent with one write() per response. Connections are
 * kept alive; a request with "Connection: close" (or an HTTP/1.0 request
 * without "keep-alive") gets "Connection: close" and the connection is
 * closed after the answer. Of a request it reads only where it ends (the
 * blank line) and that header: requests with bodies are not supported.
 * Prints nothing, except a message and exit status 1 when it cannot start
 * (port in use, bad arguments) or a worker dies.
 *
 * Processes: the process started is the first worker itself (with NPROC 1
 * it is the only one, so its pid is the one whose CPU time a script reads
 * or puts in a cgroup); it forks NPROC - 1 more. SIGTERM, SIGINT or SIGHUP
 * ends it: it kills and reaps the others and exits 0. On Linux every
 * process ends when its parent does (prctl PR_SET_PDEATHSIG: the first
 * gets SIGTERM when whatever started it ends, the others SIGKILL when the
 * first ends). As Linux defines it, "the parent" is the thread that started
 * the process: start it from a thread that outlives it.
 *
 * Build: gcc -O2 -o limitsrv limitsrv.c
 * Linux only (epoll, accept4, prctl); the rest is POSIX.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_NPROC 256
#define MAX_BODY (256L << 20)
#define IN_BUF 8192   /* a request's head must fit */
#define MAX_EVENTS 256
#define ACCEPTS_PER_WAKE 64

/* One connection: what it has sent of what it owes, and what it has read
 * of a request not yet complete. */
struct conn {
    int fd;
    unsigned ev;      /* EPOLLIN or EPOLLOUT: what it waits for */
    int closing;      /* a request asked to close: no more reading */
    size_t owed;      /* responses still to send, the current included */
    size_t off;       /* bytes of the current response already sent */
    size_t len;       /* bytes in in[] */
    char in[IN_BUF];
};

static char *resp_keep, *resp_close;
static size_t len_keep, len_close;
static int ep, lfd;
static int listening; /* whether lfd is in the epoll set */
static volatile sig_atomic_t stop, child_ended;

static void die(const char *what)
{
    fprintf(stderr, "limitsrv: %s: %s\n", what, strerror(errno));
    exit(1);
}

static void drop(struct conn *c)
{
    close(c->fd);
    free(c);
    if (!listening) {
        /* Out of descriptors before: accept again. */
        struct epoll_event e = {.events = EPOLLIN, .data.ptr = NULL};
        listening = epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &e) == 0;
    }
}

/* Waits for `ev` (EPOLLIN or EPOLLOUT) on c; 0, or -1 if c was dropped. */
static int want(struct conn *c, unsigned ev)
{
    if (c->ev == ev)
        return 0;
    struct epoll_event e = {.events = ev, .data.ptr = c};
    if (epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &e) != 0) {
        drop(c);
        return -1;
    }
    c->ev = ev;
    return 0;
}

/* Whether the request head h[0..n) asks to close the connection. */
static int wants_close(const char *h, size_t n)
{
    const char *end = h + n, *eol = memchr(h, '\n', n);
    int old = eol != NULL && eol - h >= 9 &&
              memcmp(eol - 9, "HTTP/1.0\r", 9) == 0;
    for (const char *l = eol ? eol + 1 : end; l < end;) {
        const char *e = memchr(l, '\n', (size_t)(end - l));
        if (e == NULL)
            e = end;
        if (e - l > 11 && strncasecmp(l, "connection:", 11) == 0) {
            for (const char *v = l + 11; v + 5 <= e; v++) {
                if (strncasecmp(v, "close", 5) == 0)
                    return 1;
                if (v + 10 <= e && strncasecmp(v, "keep-alive", 10) == 0)
                    return 0;
            }
        }
        l = e + 1;
    }
    return old;
}

/* Sends what c owes; then closes it or waits for more requests. */
static void flush(struct conn *c)
{
    while (c->owed > 0) {
        int last = c->closing && c->owed == 1;
        const char *r = last ? resp_close : resp_keep;
        size_t n = last ? len_close : len_keep;
        ssize_t w = write(c->fd, r + c->off, n - c->off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && errno == EAGAIN) {
            want(c, EPOLLOUT);
            return;
        }
        if (w < 0) {
            drop(c);
            return;
        }
        c->off += (size_t)w;
        if (c->off == n) {
            c->off = 0;
            c->owed--;
        }
    }
    if (c->closing)
        drop(c);
    else
        want(c, EPOLLIN);
}

/* Reads what arrived on c and answers every request it completes. */
static void readable(struct conn *c)
{
    ssize_t r = read(c->fd, c->in + c->len, sizeof c->in - c->len);
    if (r < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    if (r <= 0) {
        drop(c);
        return;
    }
    c->len += (size_t)r;
    size_t start = 0;
    const char *e;
    while (!c->closing &&
           (e = memmem(c->in + start, c->len - start, "\r\n\r\n", 4))) {
        size_t end = (size_t)(e - c->in) + 4;
        c->closing = wants_close(c->in + start, end - start);
        c->owed++;
        start = end;
    }
    if (c->closing) {
        c->len = 0; /* nothing after a "close" is answered */
    } else {
        memmove(c->in, c->in + start, c->len - start);
        c->len -= start;
        if (c->len == sizeof c->in) { /* a head too long: give up */
            drop(c);
            return;
        }
    }
    if (c->owed > 0)
        flush(c);
}

static void accept_some(void)
{
    for (int i = 0; i < ACCEPTS_PER_WAKE; i++) {
        int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if ((errno == EMFILE || errno == ENFILE) &&
                epoll_ctl(ep, EPOLL_CTL_DEL, lfd, NULL) == 0)
                listening = 0; /* until a connection closes */
            return;
        }
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        struct conn *c = malloc(sizeof *c);
        struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
        if (c == NULL || epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) != 0) {
            free(c);
            close(fd);
            continue;
        }
        c->fd = fd;
        c->ev = EPOLLIN;
        c->closing = 0;
        c->owed = c->off = c->len = 0;
    }
}

/* The event loop on listening socket `l`, until `stop` or a child ended.
 * `mask` is the signal mask while waiting (NULL: leave it). */
static void serve(int l, const sigset_t *mask)
{
    struct epoll_event evs[MAX_EVENTS];
    lfd = l;
    ep = epoll_create1(EPOLL_CLOEXEC);
    if (ep < 0)
        die("epoll_create1");
    struct epoll_event e = {.events = EPOLLIN, .data.ptr = NULL};
    if (epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &e) != 0)
        die("epoll_ctl");
    listening = 1;
    while (!stop && !child_ended) {
        int n = epoll_pwait(ep, evs, MAX_EVENTS, -1, mask);
        if (n < 0 && errno != EINTR)
            die("epoll_wait");
        for (int i = 0; i < n; i++) {
            struct conn *c = evs[i].data.ptr;
            if (c == NULL)
                accept_some();
            else if (evs[i].events & EPOLLERR)
                drop(c);
            else if (c->ev == EPOLLOUT)
                flush(c);
            else
                readable(c);
        }
    }
}

static void on_signal(int sig)
{
    if (sig == SIGCHLD)
        child_ended = 1;
    else
        stop = 1;
}

/* Builds the two responses (kept alive, closing) with a BODY-byte body. */
static void build(long body)
{
    const char *fmt = "HTTP/1.1 200 OK\r\nServer: limitsrv\r\n"
                      "Content-Type: application/octet-stream\r\n"
                      "Content-Length: %ld\r\n%s\r\n";
    char head[256];
    char **r[2] = {&resp_keep, &resp_close};
    size_t *len[2] = {&len_keep, &len_close};
    for (int k = 0; k < 2; k++) {
        int h = snprintf(head, sizeof head, fmt, body,
                         k ? "Connection: close\r\n" : "");
        *len[k] = (size_t)h + (size_t)body;
        if ((*r[k] = malloc(*len[k])) == NULL)
            die("malloc");
        memcpy(*r[k], head, (size_t)h);
        for (long i = 0; i < body; i++)
            (*r[k])[h + i] = (char)('a' + i % 26);
    }
}

static long arg(const char *s, const char *name, long lo, long hi)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (*s == '\0' || *end != '\0' || errno != 0 || v < lo || v > hi) {
        fprintf(stderr,
                "limitsrv: %s = %s: expected a number from %ld to %ld\n"
                "usage: limitsrv PORT NPROC BODY\n",
                name, s, lo, hi);
        exit(2);
    }
    return v;
}

/* NPROC listening sockets on 127.0.0.1:port, after checking that nothing
 * listens there already (SO_REUSEPORT would share the port with it). */
static void open_listeners(int *l, long nproc, long port)
{
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons((unsigned short)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int one = 1;
    int probe = socket(AF_INET, SOCK_STREAM, 0);
    if (probe < 0 ||
        setsockopt(probe, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0)
        die("socket");
    if (bind(probe, (struct sockaddr *)&a, sizeof a) != 0) {
        fprintf(stderr, "limitsrv: 127.0.0.1:%ld: %s\n", port,
                strerror(errno));
        exit(1);
    }
    close(probe);
    for (long i = 0; i < nproc; i++) {
        l[i] = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (l[i] < 0 ||
            setsockopt(l[i], SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) ||
            setsockopt(l[i], SOL_SOCKET, SO_REUSEPORT, &one, sizeof one) ||
            bind(l[i], (struct sockaddr *)&a, sizeof a) ||
            listen(l[i], 4096)) {
            fprintf(stderr, "limitsrv: listening socket %ld on 127.0.0.1:%ld: "
                            "%s\n", i + 1, port, strerror(errno));
            exit(1);
        }
    }
}

static void stop_workers(const pid_t *w, long n)
{
    for (long i = 0; i < n; i++)
        kill(w[i], SIGKILL);
    for (long i = 0; i < n; i++)
        while (waitpid(w[i], NULL, 0) < 0 && errno == EINTR)
            ;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: limitsrv PORT NPROC BODY\n");
        return 2;
    }
    long port = arg(argv[1], "PORT", 1, 65535);
    long nproc = arg(argv[2], "NPROC", 1, MAX_NPROC);
    long body = arg(argv[3], "BODY", 0, MAX_BODY);
    pid_t starter = getppid();
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != starter)
        return 0; /* whatever started it has already ended */
    build(body);
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    signal(SIGPIPE, SIG_IGN);
    int l[MAX_NPROC];
    open_listeners(l, nproc, port);

    /* Signals arrive only while waiting for events (epoll_pwait). */
    sigset_t block, none;
    sigemptyset(&none);
    sigemptyset(&block);
    int sigs[] = {SIGTERM, SIGINT, SIGHUP, SIGCHLD};
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_NOCLDSTOP; /* SIGCHLD: a worker ended, not stopped */
    for (int i = 0; i < 4; i++) {
        sigaddset(&block, sigs[i]);
        sigaction(sigs[i], &sa, NULL);
    }
    sigprocmask(SIG_BLOCK, &block, NULL);
    pid_t self = getpid(), w[MAX_NPROC];
    long nw = 0;
    for (long i = 1; i < nproc; i++) {
        pid_t pid = fork();
        if (pid < 0) {
            fprintf(stderr, "limitsrv: fork: %s\n", strerror(errno));
            stop_workers(w, nw);
            return 1;
        }
        if (pid == 0) {
            sa.sa_handler = SIG_DFL;
            for (int k = 0; k < 4; k++)
                sigaction(sigs[k], &sa, NULL);
            sigprocmask(SIG_SETMASK, &none, NULL);
            prctl(PR_SET_PDEATHSIG, SIGKILL);
            if (getppid() != self)
                _exit(0);
            for (long k = 0; k < nproc; k++)
                if (k != i)
                    close(l[k]);
            serve(l[i], NULL);
            _exit(0);
        }
        w[nw++] = pid;
    }
    for (long k = 1; k < nproc; k++)
        close(l[k]);
    serve(l[0], &none);
    int status = 0;
    pid_t gone = child_ended ? waitpid(-1, &status, WNOHANG) : 0;
    stop_workers(w, nw);
    if (gone > 0 && !stop) {
        fprintf(stderr, "limitsrv: worker %d ended (%s %d)\n", (int)gone,
                WIFSIGNALED(status) ? "signal" : "status",
                WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
        return 1;
    }
    return 0;
}
