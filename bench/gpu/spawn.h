/* spawn.h — two ranks of one program without a launcher, for the NVSHMEM and NCCL peers.
 *
 * Rank 0 is the process the user started. peer_spawn() forks and execs the same program
 * (/proc/self/exe, same arguments) as rank 1, joined to rank 0 by a socket pair whose end
 * rank 1 finds in HGAS_GPU_PEER_FD. The socket carries the bootstrap id (NCCL unique id,
 * NVSHMEM unique id) and small control messages: barriers between timed batches and the
 * result of data checks made on rank 1. Rank 1 prints nothing on stdout; rank 0 reports.
 *
 * Failure handling, so that nothing hangs:
 *  - rank 1 dies with rank 0 (PR_SET_PDEATHSIG, set before exec);
 *  - a thread of rank 0 waits for rank 1 and ends rank 0 (status 1) if rank 1 fails first;
 *  - a socket that closes early ends the reader with a message naming the other rank;
 *  - both ranks end themselves with status 124 after --timeout seconds (alarm). */
#ifndef HGAS_BENCH_GPU_SPAWN_H
#define HGAS_BENCH_GPU_SPAWN_H

#include "gpu_common.h"

#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <atomic>

struct peer_link {
    int rank = 0;
    int fd = -1;
    pid_t child = -1;
    pthread_t watcher{};
    bool watching = false;
};

static peer_link g_link;
static std::atomic<int> g_link_finishing{0};
static int g_child_status = -1;

/* Called first in main (before any CUDA call): sets g_rank and the link when this process is
 * rank 1. Returns the rank. */
static inline int peer_role(void) {
    const char *fd = getenv("HGAS_GPU_PEER_FD");
    if (!fd) return 0;
    g_link.rank = 1;
    g_link.fd = atoi(fd);
    g_rank = 1;
    unsetenv("HGAS_GPU_PEER_FD");
    return 1;
}

static void peer_on_alarm(int) {
    static const char msg[] = ": timed out (--timeout); ending both ranks\n";
    ssize_t r = write(2, g_prog, strlen(g_prog));
    r = write(2, msg, sizeof msg - 1);
    (void)r;
    if (g_link.child > 0) kill(g_link.child, SIGKILL);
    _exit(124);
}

static inline void peer_arm_timeout(double seconds) {
    signal(SIGALRM, peer_on_alarm);
    alarm((unsigned)(seconds + 0.5));
}

static inline const char *peer_status_text(int st, char *buf, size_t n) {
    if (WIFEXITED(st)) snprintf(buf, n, "exited with status %d", WEXITSTATUS(st));
    else if (WIFSIGNALED(st)) snprintf(buf, n, "was killed by signal %d (%s)", WTERMSIG(st), strsignal(WTERMSIG(st)));
    else snprintf(buf, n, "ended with wait status %d", st);
    return buf;
}

static void *peer_watch(void *) {
    int st = 0;
    pid_t r;
    do r = waitpid(g_link.child, &st, 0);
    while (r < 0 && errno == EINTR);
    g_child_status = r == g_link.child ? st : -1;
    const bool ok = r == g_link.child && WIFEXITED(st) && WEXITSTATUS(st) == 0;
    if (!ok && !g_link_finishing.load()) {
        char buf[128];
        fprintf(stderr, "%s: rank 0: FAILED: rank 1 (pid %d) %s; ending rank 0\n", g_prog, (int)g_link.child,
                r == g_link.child ? peer_status_text(st, buf, sizeof buf) : "could not be waited for");
        fflush(stdout);
        fflush(stderr);
        _exit(1);
    }
    return NULL;
}

/* Rank 0: starts rank 1 as a copy of this program. */
static inline void peer_spawn(char **argv) {
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) gpu_die("socketpair: %s", strerror(errno));
    const pid_t parent = getpid();
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) gpu_die("fork: %s", strerror(errno));
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) _exit(1);
        int cfd = dup(sv[1]); /* the duplicate does not close on exec */
        if (cfd < 0) _exit(127);
        char v[16];
        snprintf(v, sizeof v, "%d", cfd);
        setenv("HGAS_GPU_PEER_FD", v, 1);
        execv("/proc/self/exe", argv);
        fprintf(stderr, "%s: cannot start rank 1 (exec /proc/self/exe): %s\n", g_prog, strerror(errno));
        _exit(127);
    }
    close(sv[1]);
    g_link.fd = sv[0];
    g_link.child = pid;
    g_link.rank = 0;
    if (pthread_create(&g_link.watcher, NULL, peer_watch, NULL) != 0) gpu_die("pthread_create failed");
    g_link.watching = true;
}

static inline void link_send(const void *p, size_t n) {
    const char *c = (const char *)p;
    while (n > 0) {
        ssize_t k = send(g_link.fd, c, n, MSG_NOSIGNAL);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0)
            gpu_die("lost the link to rank %d (%s): it failed or exited; see its message above", 1 - g_rank,
                    strerror(errno));
        c += k;
        n -= (size_t)k;
    }
}

static inline void link_recv(void *p, size_t n) {
    char *c = (char *)p;
    while (n > 0) {
        ssize_t k = recv(g_link.fd, c, n, 0);
        if (k < 0 && errno == EINTR) continue;
        if (k == 0 || (k < 0 && errno == ECONNRESET))
            gpu_die("rank %d closed the link early (it failed or exited; see its message above)", 1 - g_rank);
        if (k < 0) gpu_die("link to rank %d: %s", 1 - g_rank, strerror(errno));
        c += k;
        n -= (size_t)k;
    }
}

/* Both ranks pass it together. */
static inline void link_barrier(void) {
    char b = 'b';
    if (g_rank == 0) {
        link_send(&b, 1);
        link_recv(&b, 1);
    } else {
        link_recv(&b, 1);
        link_send(&b, 1);
    }
}

/* Both ranks contribute `ok`; both get the AND. */
static inline int link_all_ok(int ok) {
    int32_t mine = ok ? 1 : 0, theirs = 0;
    if (g_rank == 0) {
        link_send(&mine, sizeof mine);
        link_recv(&theirs, sizeof theirs);
    } else {
        link_recv(&theirs, sizeof theirs);
        link_send(&mine, sizeof mine);
    }
    return mine && theirs;
}

/* The end: rank 0 waits for rank 1 and returns 1 if it failed; rank 1 returns 0. Call after
 * the library's finalize. */
static inline int peer_finish(void) {
    g_link_finishing.store(1);
    if (g_link.fd >= 0) close(g_link.fd);
    g_link.fd = -1;
    if (g_rank != 0 || !g_link.watching) return 0;
    pthread_join(g_link.watcher, NULL);
    g_link.watching = false;
    const int st = g_child_status;
    if (st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0) return 0;
    char buf[128];
    fprintf(stderr, "%s: rank 0: rank 1 %s\n", g_prog,
            st == -1 ? "could not be waited for" : peer_status_text(st, buf, sizeof buf));
    return 1;
}

/* Called right before finalize: from here a failure of rank 1 no longer kills rank 0 at once
 * (peer_finish reports it). */
static inline void peer_finishing(void) { g_link_finishing.store(1); }

#endif /* HGAS_BENCH_GPU_SPAWN_H */
