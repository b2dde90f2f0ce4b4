/* shm_full_prog [BYTES]: hgas_init, then rank 0 prints how much of /dev/shm the job holds;
 * with BYTES, every rank then asks hgas_malloc for BYTES and prints what it got (or the
 * error). Run by shm_full.sh inside a small private /dev/shm. */
#include <hgas/hgas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>

int main(int argc, char **argv) {
    if (hgas_init() != HGAS_OK) {
        fprintf(stderr, "init failed: %s\n", hgas_last_error());
        return 1;
    }
    const int me = hgas_rank_me(), n = hgas_rank_n();
    if (hgas_barrier() != HGAS_OK) return 1;
    if (me == 0) {
        struct statvfs fs;
        if (statvfs("/dev/shm", &fs) != 0) return 1;
        const unsigned long long used = (unsigned long long)(fs.f_blocks - fs.f_bfree) * fs.f_frsize;
        printf("init ok: %d ranks hold %llu bytes of /dev/shm (%llu per rank)\n", n, used, used / (unsigned)n);
        fflush(stdout);
    }
    if (argc > 1) {
        void *p = NULL;
        const size_t bytes = strtoull(argv[1], NULL, 10);
        if (hgas_malloc(bytes, &p) != HGAS_OK) {
            printf("rank %d: hgas_malloc(%zu) failed: %s\n", me, bytes, hgas_last_error());
            fflush(stdout);
            return 2;
        }
        memset(p, 1, bytes);
        printf("rank %d: hgas_malloc(%zu) ok\n", me, bytes);
        hgas_free(p);
    }
    return hgas_finalize() == HGAS_OK ? 0 : 1;
}
