/* shmem_global_exit (global_exit.sh runs it): one PE ends the whole job with a status while
 * the others are busy in different ways; the job must exit with exactly that status.
 *   global_exit STATUS PE barrier    the others wait in shmem_barrier_all
 *   global_exit STATUS PE compute    the others compute without calling OpenSHMEM for 30 s
 *   global_exit STATUS PE wait       the others wait on a variable nobody sets
 * Every PE prints a line before; nothing after the exit point may be printed. */
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static long never_set; /* a symmetric (static) variable nobody writes */

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: global_exit STATUS PE barrier|compute|wait\n");
        return 2;
    }
    const int status = atoi(argv[1]), who = atoi(argv[2]);
    const char *how = argv[3];
    shmem_init();
    const int me = shmem_my_pe();
    printf("PE %d: started\n", me);
    fflush(stdout);
    shmem_barrier_all();
    if (me == who) {
        printf("PE %d: calling shmem_global_exit(%d)\n", me, status); /* flushed by global_exit */
        shmem_global_exit(status);
        printf("PE %d: shmem_global_exit returned\n", me);
        return 99;
    }
    if (!strcmp(how, "barrier")) {
        shmem_barrier_all();
    } else if (!strcmp(how, "compute")) {
        const time_t end = time(NULL) + 30;
        volatile unsigned long spin = 0;
        while (time(NULL) < end) ++spin;
    } else {
        shmem_long_wait_until(&never_set, SHMEM_CMP_NE, 0);
    }
    printf("PE %d: still running after the job was ended\n", me);
    shmem_finalize();
    return 98;
}
