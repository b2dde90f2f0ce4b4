/* A rank program over the full runtime for the fault tests (runtime_faults.sh, kill_trials.sh):
 *   fault_prog die R [WHERE]    rank R kills itself with SIGKILL after init; the others wait in
 *                               WHERE and must be told the job is ending
 *   fault_prog hang R [WHERE] [ignore]
 *                               rank R stays alive but never calls hgas again (sleeps); the
 *                               others wait in WHERE; with `ignore` they exit 0 whatever the
 *                               wait returned (a program that does not check hgas_finalize)
 *   fault_prog late R S         rank R sleeps S seconds before hgas_init (a rank that never joins
 *                               in time)
 *   fault_prog abort R          rank R calls hgas_abort while the others wait in a barrier
 *   fault_prog segv R           rank R dereferences a bad pointer (SIGSEGV): its crash report
 *                               (rank, signal, backtrace) is printed before it dies
 *   fault_prog die_recv R       rank R kills itself with SIGKILL; the others wait in a blocking
 *                               hgas_recv from it (one of them from any rank)
 *   fault_prog ok -             no fault: a barrier and hgas_finalize (store_flood.sh)
 * WHERE (default barrier): barrier, quiet (non-blocking puts to rank R, then hgas_quiet), wait
 * (a handle of a put to rank R), signal (hgas_signal_wait_until for a signal from rank R),
 * coll (hgas_allreduce), finalize (hgas_finalize), exit (no wait: exit 0 at once, without
 * hgas_finalize, leaving the victim to hgasrun).
 * Every rank prints "rank X: <what>: <status>: <message>" when a call fails and exits 1. */
#include <hgas/hgas.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int me = -1; /* kept: after hgas_finalize, hgas_rank_me() no longer knows */

/* Wall-clock seconds, for kill_trials.sh: how long after the victim's death a wait ended. */
static double wall(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int report(const char *what, hgas_status_t s) {
    const double t = wall();
    printf("rank %d: %s: %s: %s\n", me, what, hgas_error_string(s), hgas_last_error());
    printf("rank %d: ended at %.6f\n", me, t);
    fflush(stdout);
    return 1;
}

#define BUF_WORDS 8192 /* 64 KiB per put: large enough to need the target's help in UCX's AM mode */

/* The wait in which the survivors meet the dead or hung rank `victim`. */
static hgas_status_t wait_in(const char *where, int victim, uint64_t *buf, uint64_t *sig) {
    if (victim < 0) return !strcmp(where, "finalize") ? hgas_finalize() : hgas_barrier(); /* mode ok */
    hgas_gptr_t dst;
    hgas_status_t s = hgas_ptr(buf, victim, &dst);
    if (s != HGAS_OK) return s;
    static uint64_t src[BUF_WORDS];
    if (!strcmp(where, "quiet")) {
        for (int i = 0; i < 64 && s == HGAS_OK; ++i) s = hgas_put_nbi(dst, src, sizeof src);
        return s != HGAS_OK ? s : hgas_quiet();
    }
    if (!strcmp(where, "wait")) {
        hgas_handle_t h;
        for (int i = 0; i < 64 && s == HGAS_OK; ++i) {
            s = hgas_put_nb(dst, src, sizeof src, &h);
            if (s == HGAS_OK) s = hgas_wait(h);
        }
        return s;
    }
    if (!strcmp(where, "signal")) return hgas_signal_wait_until(sig, HGAS_CMP_GE, 1, NULL);
    if (!strcmp(where, "coll")) {
        int64_t one = 1, sum = 0;
        return hgas_allreduce(&sum, &one, 1, HGAS_INT64, HGAS_OP_SUM);
    }
    if (!strcmp(where, "finalize")) return hgas_finalize();
    return hgas_barrier();
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: fault_prog die|die_recv|die_unmapped|hang|late|abort RANK [WHERE|SECONDS] [ignore]\n");
        return 2;
    }
    const char *mode = argv[1];
    int victim = !strcmp(mode, "ok") ? -1 : atoi(argv[2]);
    const char *where = argc > 3 && strcmp(mode, "late") ? argv[3] : "barrier";
    const int ignore = argc > 4 && !strcmp(argv[4], "ignore");
    const char *env_rank = getenv("HGAS_RANK");
    int my = env_rank ? atoi(env_rank) : 0;
    if (my == 0 && getenv("HGAS_JOB_ID")) { /* the tests look for this job's leftovers only */
        printf("rank 0: job %s\n", getenv("HGAS_JOB_ID"));
        fflush(stdout);
    }
    if (!strcmp(mode, "late") && my == victim) sleep((unsigned)atoi(argc > 3 ? argv[3] : "30"));
    hgas_status_t s = hgas_init();
    if (s != HGAS_OK) {
        printf("rank %d: hgas_init: %s: %s\n", my, hgas_error_string(s), hgas_last_error());
        return 1;
    }
    me = hgas_rank_me();
    uint64_t *buf, *sig;
    if ((s = hgas_calloc(BUF_WORDS, sizeof(uint64_t), (void **)&buf)) != HGAS_OK) return report("hgas_calloc", s);
    if ((s = hgas_calloc(1, sizeof(uint64_t), (void **)&sig)) != HGAS_OK) return report("hgas_calloc", s);
    if ((s = hgas_barrier()) != HGAS_OK) return report("first barrier", s);
    if (hgas_rank_me() == victim) {
        printf("rank %d: pid %d, at %.6f\n", victim, (int)getpid(), wall());
        fflush(stdout);
        if (!strcmp(mode, "die") || !strcmp(mode, "die_recv") || !strcmp(mode, "die_unmapped")) raise(SIGKILL);
        if (!strcmp(mode, "abort")) hgas_abort(3, "the test asked for it");
        if (!strcmp(mode, "segv")) {
            int *volatile bad = (int *)(uintptr_t)16; /* volatile: the compiler cannot see the value */
            *bad = 1;
        }
        if (!strcmp(mode, "hang"))
            for (;;) pause(); /* alive, never calls hgas again */
    }
    if (!strcmp(mode, "die_recv")) {
        /* A receive from the dead rank (rank 0: from any rank) must end, naming it. */
        char msg[64];
        int src = hgas_rank_me() == 0 ? HGAS_ANY_RANK : victim;
        if ((s = hgas_recv(msg, sizeof msg, src, 5, NULL)) != HGAS_OK) return report("recv", s);
        printf("rank %d: received a message from a dead rank\n", hgas_rank_me());
        return 1;
    }
    /* Peers are mapped at their first use: give the victim time to be gone before the others
       first reach it, so that those that never reached it before (the barrier touches a few)
       meet a dead process, not its memory. */
    if (!strcmp(mode, "die_unmapped")) sleep(1);
    if (!strcmp(where, "exit")) return 0; /* a program that ends without hgas_finalize */
    /* The others wait here for a rank that will never come. */
    s = !strcmp(mode, "abort") ? hgas_barrier() : wait_in(where, victim, buf, sig);
    if (s != HGAS_OK) {
        const char *what = !strcmp(mode, "abort") || !strcmp(where, "barrier") ? "second barrier" : where;
        report(what, s);
        return ignore ? 0 : 1;
    }
    printf("rank %d: passed %s\n", me, where);
    if (!strcmp(where, "finalize")) return 0;
    s = hgas_finalize();
    if (s != HGAS_OK) report("hgas_finalize", s);
    return s == HGAS_OK || ignore ? 0 : 1;
}
