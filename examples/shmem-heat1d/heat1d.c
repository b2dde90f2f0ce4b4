/* heat1d — explicit 1-D heat diffusion over the PEs, written the way OpenSHMEM programs have
 * long been written: the field and its ghost cells are global (static) arrays, the halo is
 * exchanged with shmem_double_p into the neighbours' globals, parameters are broadcast and the
 * convergence measure reduced with the old active-set collectives and static pSync/pWrk, and
 * a step counter on PE 0 is advanced with the old atomic name shmem_long_finc. At the end PE 0
 * gathers the field (shmem_fcollect64) and compares it with the same scheme run serially.
 *
 * Build and run as a user would:  CC=oshcc ./configure && make && oshrun -n 4 ./heat1d
 * (or: oshcc -O2 heat1d.c -o heat1d). Exit status 0 if the parallel field equals the serial
 * one bit for bit. Any number of PEs that divides 1680 (1..8, 10, 12, ...). */
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CELLS 1680 /* divisible by 1..8 */
#define ALPHA 0.25

static double u[CELLS + 2], unew[CELLS + 2]; /* this PE's block, u[0] and u[local+1] are ghosts */
static double field[CELLS];                  /* the whole field, gathered at the end */
static int params[2];                        /* steps, report interval: from PE 0 */
static double change, max_change;            /* largest change of the last step, and its max */
static long steps_done;                      /* on PE 0: one count per PE and step */
static long pSync_bcast[SHMEM_BCAST_SYNC_SIZE];
static long pSync_reduce[SHMEM_REDUCE_SYNC_SIZE];
static long pSync_collect[SHMEM_COLLECT_SYNC_SIZE];
static double pWrk[SHMEM_REDUCE_MIN_WRKDATA_SIZE];

/* A rough start, so that every block boundary matters from the first step. */
static double initial(int cell) { return (double)(cell * 7919 % 1000) / 1000.0; }

/* One step of the scheme on cells 1..n of `a` into `b`, ghosts a[0] and a[n+1] set. */
static double step(const double *a, double *b, int n) {
    double biggest = 0;
    for (int i = 1; i <= n; ++i) {
        b[i] = a[i] + ALPHA * (a[i - 1] - 2 * a[i] + a[i + 1]);
        const double d = b[i] > a[i] ? b[i] - a[i] : a[i] - b[i];
        if (d > biggest) biggest = d;
    }
    return biggest;
}

int main(int argc, char **argv) {
    start_pes(0); /* the old name of shmem_init */
    const int me = shmem_my_pe(), npes = shmem_n_pes();
    if (CELLS % npes != 0) {
        if (me == 0) fprintf(stderr, "heat1d: %d PEs do not divide %d cells\n", npes, CELLS);
        shmem_global_exit(2);
    }
    for (int i = 0; i < SHMEM_BCAST_SYNC_SIZE; ++i) pSync_bcast[i] = SHMEM_SYNC_VALUE;
    for (int i = 0; i < SHMEM_REDUCE_SYNC_SIZE; ++i) pSync_reduce[i] = SHMEM_SYNC_VALUE;
    for (int i = 0; i < SHMEM_COLLECT_SYNC_SIZE; ++i) pSync_collect[i] = SHMEM_SYNC_VALUE;
    if (me == 0) {
        params[0] = argc > 1 ? atoi(argv[1]) : 500;
        params[1] = 100;
    }
    shmem_barrier_all(); /* every pSync is initialized before anyone uses one */
    shmem_broadcast32(params, params, 2, 0, 0, 0, npes, pSync_bcast);
    const int steps = params[0], every = params[1];
    const int local = CELLS / npes, left = me - 1, right = me + 1;
    for (int i = 1; i <= local; ++i) u[i] = initial(me * local + i - 1);

    for (int s = 1; s <= steps; ++s) {
        /* halo: my first cell into the left neighbour's right ghost, my last into the right's
         * left ghost; the ends of the rod are held at 1 (left) and 0 (right) */
        if (left >= 0) shmem_double_p(&u[local + 1], u[1], left);
        if (right < npes) shmem_double_p(&u[0], u[local], right);
        shmem_barrier_all();
        if (left < 0) u[0] = 1.0;
        if (right >= npes) u[local + 1] = 0.0;
        change = step(u, unew, local);
        shmem_barrier_all(); /* neighbours have read nothing of u that changes now */
        memcpy(&u[1], &unew[1], local * sizeof(double));
        shmem_long_finc(&steps_done, 0);
        if (s % every == 0) {
            shmem_double_max_to_all(&max_change, &change, 1, 0, 0, npes, pWrk, pSync_reduce);
            if (me == 0) printf("heat1d: step %d, largest change %.3e\n", s, max_change);
        }
    }
    shmem_barrier_all();
    shmem_fcollect64(field, &u[1], local, 0, 0, npes, pSync_collect);

    int status = 0;
    if (me == 0) {
        /* the same scheme on the whole rod in one piece */
        static double a[CELLS + 2], b[CELLS + 2];
        for (int i = 0; i < CELLS; ++i) a[i + 1] = initial(i);
        for (int s = 1; s <= steps; ++s) {
            a[0] = 1.0, a[CELLS + 1] = 0.0;
            step(a, b, CELLS);
            memcpy(&a[1], &b[1], CELLS * sizeof(double));
        }
        int differ = 0;
        for (int i = 0; i < CELLS; ++i) differ += field[i] != a[i + 1];
        if (steps_done != (long)steps * npes) {
            printf("heat1d: the step counter on PE 0 is %ld, want %ld\n", steps_done, (long)steps * npes);
            status = 1;
        }
        if (differ) {
            printf("heat1d: %d of %d cells differ from the serial run\n", differ, CELLS);
            status = 1;
        } else {
            double sum = 0;
            for (int i = 0; i < CELLS; ++i) sum += field[i];
            printf("heat1d: %d cells on %d PEs, %d steps: equal to the serial run (sum %.9f)\n", CELLS, npes, steps,
                   sum);
        }
    }
    shmem_finalize();
    return status;
}
