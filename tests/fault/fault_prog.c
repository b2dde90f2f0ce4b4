/* A rank program over the full runtime for the fault tests (runtime_faults.sh):
 *   fault_prog die R        rank R kills itself with SIGKILL after init; the others wait in
 *                           hgas_barrier and must be told the job is ending
 *   fault_prog late R S     rank R sleeps S seconds before hgas_init (a rank that never joins
 *                           in time)
 *   fault_prog abort R      rank R calls hgas_abort while the others wait in a barrier
 *   fault_prog die_recv R   rank R kills itself with SIGKILL; the others wait in a blocking
 *                           hgas_recv from it (one of them from any rank)
 * Every rank prints "rank X: <status>: <message>" when a call fails and exits 1. */
#include <hgas/hgas.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int report(const char *what, hgas_status_t s) {
    printf("rank %d: %s: %s: %s\n", hgas_rank_me(), what, hgas_error_string(s), hgas_last_error());
    fflush(stdout);
    return 1;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: fault_prog die|die_recv|late|abort RANK [SECONDS]\n");
        return 2;
    }
    const char *mode = argv[1];
    int victim = atoi(argv[2]);
    const char *env_rank = getenv("HGAS_RANK");
    int my = env_rank ? atoi(env_rank) : 0;
    if (!strcmp(mode, "late") && my == victim) sleep((unsigned)atoi(argc > 3 ? argv[3] : "30"));
    hgas_status_t s = hgas_init();
    if (s != HGAS_OK) {
        printf("rank %d: hgas_init: %s: %s\n", my, hgas_error_string(s), hgas_last_error());
        return 1;
    }
    if ((s = hgas_barrier()) != HGAS_OK) return report("first barrier", s);
    if (hgas_rank_me() == victim) {
        if (!strcmp(mode, "die") || !strcmp(mode, "die_recv")) raise(SIGKILL);
        if (!strcmp(mode, "abort")) hgas_abort(3, "the test asked for it");
    }
    if (!strcmp(mode, "die_recv")) {
        /* A receive from the dead rank (rank 0: from any rank) must end, naming it. */
        char buf[64];
        int src = hgas_rank_me() == 0 ? HGAS_ANY_RANK : victim;
        if ((s = hgas_recv(buf, sizeof buf, src, 5, NULL)) != HGAS_OK) return report("recv", s);
        printf("rank %d: received a message from a dead rank\n", hgas_rank_me());
        return 1;
    }
    /* The others wait here for a rank that will never come. */
    if ((s = hgas_barrier()) != HGAS_OK) return report("second barrier", s);
    printf("rank %d: passed the second barrier\n", hgas_rank_me());
    return hgas_finalize() == HGAS_OK ? 0 : 1;
}
