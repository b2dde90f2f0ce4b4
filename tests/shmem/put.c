/* Puts: the specification's shmem_put and shmem_iput examples, every put form, with each PE
 * writing to its right neighbour (itself when alone). */
#include <string.h>

#include "check.h"

int main(void) {
    shmem_init();
    const int me = shmem_my_pe(), n = shmem_n_pes(), right = (me + 1) % n, left = (me + n - 1) % n;

    /* Spec example: ten longs from source to dest on the next PE. */
    long source[10];
    for (int i = 0; i < 10; ++i) source[i] = 100 * me + i + 1;
    long *dest = shmem_malloc(10 * sizeof(long));
    shmem_long_put(dest, source, 10, right);
    shmem_barrier_all();
    for (int i = 0; i < 10; ++i) CHECK(dest[i] == 100 * left + i + 1, "dest[%d] = %ld", i, dest[i]);

    /* Spec example for iput: source[0, 2, 4, 6, 8] to dest[0..4]; here with a dest stride too. */
    short ssrc[10];
    for (int i = 0; i < 10; ++i) ssrc[i] = (short)(i + 1 + 10 * me);
    short *sdest = shmem_calloc(10, sizeof(short));
    shmem_short_iput(sdest, ssrc, 2, 2, 5, right);
    shmem_barrier_all();
    for (int i = 0; i < 10; ++i) {
        short want = i % 2 == 0 ? (short)(i + 1 + 10 * left) : 0;
        CHECK(sdest[i] == want, "iput sdest[%d] = %d, want %d", i, sdest[i], want);
    }

    /* p, typed puts of several types, put_nbi + quiet. */
    double *d = shmem_malloc(4 * sizeof(double));
    char *c = shmem_malloc(16);
    long double *ld = shmem_malloc(2 * sizeof(long double));
    size_t *sz = shmem_malloc(3 * sizeof(size_t));
    shmem_double_p(&d[3], 0.5 + me, right);
    shmem_char_put(c, "hello, shmem", 13, right);
    long double ldv[2] = {1.25L * me, -3.0L};
    shmem_longdouble_put_nbi(ld, ldv, 2, right);
    size_t szv[3] = {(size_t)me, (size_t)1 << 40, 7};
    shmem_size_put_nbi(sz, szv, 3, right);
    shmem_quiet();
    shmem_barrier_all();
    CHECK(d[3] == 0.5 + left, "double_p %g", d[3]);
    CHECK(strcmp(c, "hello, shmem") == 0, "char_put '%s'", c);
    CHECK(ld[0] == 1.25L * left && ld[1] == -3.0L, "longdouble_put_nbi");
    CHECK(sz[0] == (size_t)left && sz[1] == (size_t)1 << 40 && sz[2] == 7, "size_put_nbi");

    /* Sized and untyped forms. */
    unsigned char *raw = shmem_calloc(256, 1);
    uint64_t words[4];
    for (int i = 0; i < 4; ++i) words[i] = 0x0101010101010101ull * (uint64_t)(me + 1) + (uint64_t)i;
    shmem_putmem(raw, "abc", 3, right);
    shmem_put8(raw + 3, "d", 1, right);
    shmem_put16(raw + 4, words, 2, right);          /* 4 bytes */
    shmem_put32(raw + 8, words, 2, right);          /* 8 bytes */
    shmem_put64(raw + 16, words, 4, right);         /* 32 bytes */
    shmem_put128(raw + 48, words, 2, right);        /* 32 bytes */
    shmem_put64_nbi(raw + 80, words, 1, right);
    shmem_putmem_nbi(raw + 88, "xyz", 3, right);
    shmem_iput32(raw + 96, words, 2, 2, 2, right);  /* 32-bit elements 0 and 2 of words to 0 and 2 */
    shmem_quiet();
    shmem_barrier_all();
    uint64_t lw[4];
    for (int i = 0; i < 4; ++i) lw[i] = 0x0101010101010101ull * (uint64_t)(left + 1) + (uint64_t)i;
    CHECK(memcmp(raw, "abcd", 4) == 0, "putmem/put8");
    CHECK(memcmp(raw + 4, lw, 4) == 0 && memcmp(raw + 8, lw, 8) == 0, "put16/put32");
    CHECK(memcmp(raw + 16, lw, 32) == 0 && memcmp(raw + 48, lw, 32) == 0, "put64/put128");
    CHECK(memcmp(raw + 80, lw, 8) == 0 && memcmp(raw + 88, "xyz", 3) == 0, "put64_nbi/putmem_nbi");
    const uint32_t *lw32 = (const uint32_t *)lw, *r32 = (const uint32_t *)(raw + 96);
    CHECK(r32[0] == lw32[0] && r32[1] == 0 && r32[2] == lw32[2] && r32[3] == 0, "iput32");

    /* C11 type-generic names. */
    int *gi = shmem_calloc(4, sizeof(int));
    int iv[3] = {me, me + 1, me + 2};
    shmem_put(gi, iv, 3, right);
    shmem_p(&gi[3], -me, right);
    shmem_barrier_all();
    CHECK(gi[0] == left && gi[1] == left + 1 && gi[2] == left + 2 && gi[3] == -left, "generic put/p");

    /* nelems 0 moves nothing (and may name any address). */
    shmem_long_put(dest, source, 0, right);

    shmem_free(gi);
    shmem_free(raw);
    shmem_free(sz);
    shmem_free(ld);
    shmem_free(c);
    shmem_free(d);
    shmem_free(sdest);
    shmem_free(dest);
    FINISH();
}
