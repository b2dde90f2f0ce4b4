/* Symmetric static data: global and static variables of the program (initialized data, bss,
 * static locals, a multi-megabyte bss array) as targets of RMA, atomics, signals, waits,
 * shmem_ptr and collectives, including the old pSync collectives with static pSync arrays, as
 * OpenSHMEM programs have always written them. Also: const data is not symmetric, and a forked
 * child does not share its globals with its parent. */
#include <stdint.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

long counter = 42;            /* initialized data */
long from_left[4];            /* bss */
int wide[3000];               /* bss over several pages */
static char big[3 << 20];     /* a large bss array: its last page is far from the first */
static uint64_t sig;          /* signal word */
static int flag;              /* wait variable */
static const long constant = 7; /* read-only data: not symmetric */
static long bcast[8], gathered[64], summed[4];
static long pSync[SHMEM_BCAST_SYNC_SIZE];
static long pSync2[SHMEM_REDUCE_SYNC_SIZE];
static long pWrk[SHMEM_REDUCE_MIN_WRKDATA_SIZE + 8];
static long src4[4];

/* A static local of a function is symmetric as well. */
static int *inbox(void) {
    static int box = -1;
    return &box;
}

int main(void) {
    shmem_init();
    const int me = shmem_my_pe(), n = shmem_n_pes(), right = (me + 1) % n, left = (me + n - 1) % n;
    for (int i = 0; i < SHMEM_BCAST_SYNC_SIZE; ++i) pSync[i] = SHMEM_SYNC_VALUE;
    for (int i = 0; i < SHMEM_REDUCE_SYNC_SIZE; ++i) pSync2[i] = SHMEM_SYNC_VALUE;
    CHECK(counter == 42, "initialized global lost its value at init: %ld", counter);
    long on_stack = 0;
    CHECK(shmem_addr_accessible(&counter, right) && shmem_addr_accessible(&big[sizeof big - 1], right) &&
              shmem_addr_accessible(inbox(), right),
          "globals, bss and static locals are accessible");
    CHECK(!shmem_addr_accessible(&on_stack, right), "a stack variable is not symmetric");
    CHECK(!shmem_addr_accessible(&constant, right), "const data is not symmetric");
    CHECK(shmem_ptr(&counter, me) == &counter, "shmem_ptr of a global on this PE");
    shmem_barrier_all(); /* every PE has checked counter before PE 0's is incremented */

    /* put / get / p / g into the neighbours' globals */
    const long mine[4] = {me, 10L * me, 100L * me, 1000L * me};
    shmem_long_put(from_left, mine, 4, right);
    shmem_int_p(inbox(), me, right);
    shmem_char_p(&big[sizeof big - 1], (char)(me + 1), right);
    for (int i = 0; i < 3000; ++i) wide[i] = me * 3000 + i;
    shmem_barrier_all();
    const long scale[4] = {1, 10, 100, 1000};
    for (int i = 0; i < 4; ++i) CHECK(from_left[i] == left * scale[i], "from_left[%d] = %ld", i, from_left[i]);
    CHECK(*inbox() == left, "static local %d, want %d", *inbox(), left);
    CHECK(big[sizeof big - 1] == (char)(left + 1), "last byte of the big bss array %d", big[sizeof big - 1]);
    int got[3000];
    shmem_int_get(got, wide, 3000, right);
    int same = 1;
    for (int i = 0; i < 3000; ++i) same &= got[i] == right * 3000 + i;
    CHECK(same, "get of a multi-page bss array from PE %d", right);
    CHECK(shmem_long_g(&from_left[1], right) == 10L * me, "g of a bss element");

    /* atomics on PE 0's initialized global: old and new names */
    shmem_long_atomic_add(&counter, 1, 0);
    shmem_barrier_all();
    if (me == 0) CHECK(counter == 42 + n, "counter %ld, want %d", counter, 42 + n);
    shmem_barrier_all();
    long before = shmem_long_fadd(&counter, 2, 0); /* deprecated name */
    CHECK(before >= 42 + n, "fadd returned %ld", before);
    shmem_barrier_all();
    if (me == 0) CHECK(counter == 42 + 3 * n, "counter %ld after fadd", counter);

    /* put_signal into a static signal word, wait on a static int */
    static long payload[2];
    const long pl[2] = {me, -me};
    shmem_long_put_signal(payload, pl, 2, &sig, 1, SHMEM_SIGNAL_ADD, right);
    shmem_signal_wait_until(&sig, SHMEM_CMP_GE, 1);
    CHECK(payload[0] == left && payload[1] == -left, "payload %ld %ld", payload[0], payload[1]);
    shmem_int_atomic_set(&flag, me + 1, right);
    shmem_int_wait_until(&flag, SHMEM_CMP_EQ, left + 1);

    /* load/store through shmem_ptr where the neighbour shares memory */
    shmem_barrier_all();
    long *peer = shmem_ptr(&counter, right);
    if (peer) CHECK(*peer == (right == 0 ? 42 + 3 * n : 42), "counter of PE %d through shmem_ptr: %ld", right, *peer);

    /* collectives with static buffers: team (world) and the old pSync forms */
    long root_data[8];
    for (int i = 0; i < 8; ++i) root_data[i] = 500 + i;
    CHECK(shmem_long_broadcast(SHMEM_TEAM_WORLD, bcast, root_data, 8, n - 1) == 0, "broadcast");
    for (int i = 0; i < 8; ++i) CHECK(bcast[i] == 500 + i, "bcast[%d] = %ld", i, bcast[i]);
    long mine2[2] = {me, me * me};
    CHECK(shmem_long_fcollect(SHMEM_TEAM_WORLD, gathered, mine2, 2) == 0, "fcollect");
    for (int i = 0; i < n; ++i) CHECK(gathered[2 * i] == i && gathered[2 * i + 1] == (long)i * i, "gathered %d", i);
    for (int i = 0; i < 4; ++i) src4[i] = me + i;
    CHECK(shmem_long_sum_reduce(SHMEM_TEAM_WORLD, summed, src4, 4) == 0, "sum_reduce");
    for (int i = 0; i < 4; ++i) CHECK(summed[i] == (long)n * (n - 1) / 2 + (long)n * i, "summed[%d] = %ld", i, summed[i]);
    memset(bcast, 0, sizeof bcast);
    shmem_barrier_all();
    shmem_broadcast64(bcast, root_data, 8, 0, 0, 0, n, pSync);
    for (int i = 0; i < 8; ++i) CHECK(me == 0 ? bcast[i] == 0 : bcast[i] == 500 + i, "broadcast64 bcast[%d]", i);
    if (n >= 2) { /* the odd PEs as an active set, with static pSync and pWrk */
        const int size = n / 2;
        if (me % 2 == 1) {
            shmem_long_sum_to_all(summed, src4, 4, 1, 1, size, pWrk, pSync2);
            long want = 0;
            for (int k = 0; k < size; ++k) want += 1 + 2 * k;
            CHECK(summed[0] == want && summed[3] == want + 3L * size, "sum_to_all on odd PEs: %ld", summed[0]);
            shmem_barrier(1, 1, size, pSync);
        }
        for (int i = 0; i < SHMEM_BCAST_SYNC_SIZE; ++i) CHECK(pSync[i] == SHMEM_SYNC_VALUE, "pSync[%d] reset", i);
    }

    /* fork: the child's globals are its own again */
    shmem_barrier_all();
    if (me == 0) {
        const long seen = counter;
        pid_t pid = fork();
        if (pid == 0) {
            counter = -1;
            _exit(counter == -1 ? 0 : 3);
        }
        int st = 0;
        waitpid(pid, &st, 0);
        CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "forked child");
        CHECK(counter == seen, "a forked child's write to a global reached the parent: %ld", counter);
    }
    FINISH();
}
