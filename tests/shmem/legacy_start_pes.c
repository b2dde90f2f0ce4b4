/* A program in OpenSHMEM 1.0's style: start_pes, no shmem_finalize, return from main. The
 * library must end each PE at exit (a collective finalize), so that a PE that returns first
 * does not leave while its neighbour's put to it is still in flight, and the launcher does not
 * report PEs exiting without finalizing. Each PE puts to the next and waits for its own word. */
#include <shmem.h>
#include <stdio.h>

static long word = 0;

int main(void) {
    start_pes(0);
    const int me = _my_pe(), n = _num_pes();
    shmem_long_p(&word, 1000 + me, (me + 1) % n);
    shmem_long_wait_until(&word, SHMEM_CMP_NE, 0);
    const long want = 1000 + (me + n - 1) % n;
    if (word != want) {
        fprintf(stderr, "PE %d: word is %ld, expected %ld\n", me, word, want);
        return 1;
    }
    if (me == 0) printf("legacy_start_pes: all checks passed\n");
    return 0;  /* no shmem_finalize: start_pes's contract */
}
