/* Gets: the specification's shmem_get / shmem_iget examples and every get form, each PE
 * reading from its right neighbour. */
#include <string.h>

#include "check.h"

int main(void) {
    shmem_init();
    const int me = shmem_my_pe(), n = shmem_n_pes(), right = (me + 1) % n;

    long *source = shmem_malloc(10 * sizeof(long));
    for (int i = 0; i < 10; ++i) source[i] = 1000 * me + i;
    float *f = shmem_malloc(8 * sizeof(float));
    for (int i = 0; i < 8; ++i) f[i] = (float)me + 0.25f * (float)i;
    unsigned char *raw = shmem_malloc(64);
    for (int i = 0; i < 64; ++i) raw[i] = (unsigned char)(me * 64 + i);
    shmem_barrier_all();

    long dest[10];
    shmem_long_get(dest, source, 10, right);
    for (int i = 0; i < 10; ++i) CHECK(dest[i] == 1000 * right + i, "get dest[%d] = %ld", i, dest[i]);
    CHECK(shmem_long_g(&source[9], right) == 1000 * right + 9, "long_g");
    CHECK(shmem_float_g(&f[3], right) == (float)right + 0.75f, "float_g");

    /* iget: every second element of source into every third of dest. */
    long sparse[9];
    for (int i = 0; i < 9; ++i) sparse[i] = -1;
    shmem_long_iget(sparse, source, 3, 2, 3, right);
    for (int i = 0; i < 9; ++i) {
        long want = i % 3 == 0 ? 1000 * right + 2 * (i / 3) : -1;
        CHECK(sparse[i] == want, "iget sparse[%d] = %ld, want %ld", i, sparse[i], want);
    }

    float fl[8];
    shmem_float_get_nbi(fl, f, 8, right);
    unsigned char b[64];
    memset(b, 0, sizeof b);
    shmem_getmem_nbi(b, raw, 16, right);
    shmem_quiet();
    for (int i = 0; i < 8; ++i) CHECK(fl[i] == (float)right + 0.25f * (float)i, "get_nbi fl[%d]", i);
    for (int i = 0; i < 16; ++i) CHECK(b[i] == (unsigned char)(right * 64 + i), "getmem_nbi b[%d]", i);

    memset(b, 0, sizeof b);
    shmem_getmem(b, raw, 3, right);
    shmem_get8(b + 3, raw + 3, 1, right);
    shmem_get16(b + 4, raw + 4, 2, right);
    shmem_get32(b + 8, raw + 8, 2, right);
    shmem_get64(b + 16, raw + 16, 2, right);
    shmem_get128(b + 32, raw + 32, 1, right);
    shmem_get64_nbi(b + 48, raw + 48, 1, right);
    shmem_quiet();
    for (int i = 0; i < 56; ++i) CHECK(b[i] == (unsigned char)(right * 64 + i), "sized get b[%d]", i);
    uint16_t h[4] = {0, 0, 0, 0};
    shmem_iget16(h, raw, 2, 1, 2, right); /* 16-bit elements 0 and 1 into h[0] and h[2] */
    const uint16_t *rh = (const uint16_t *)raw;
    uint16_t want0, want1;
    unsigned char rb[4];
    for (int i = 0; i < 4; ++i) rb[i] = (unsigned char)(right * 64 + i);
    memcpy(&want0, rb, 2);
    memcpy(&want1, rb + 2, 2);
    (void)rh;
    CHECK(h[0] == want0 && h[1] == 0 && h[2] == want1 && h[3] == 0, "iget16");

    /* C11 type-generic names. */
    long g2[2];
    shmem_get(g2, source + 4, 2, right);
    CHECK(g2[0] == 1000 * right + 4 && g2[1] == 1000 * right + 5, "generic get");
    CHECK(shmem_g(&source[1], right) == 1000 * right + 1, "generic g");

    shmem_barrier_all(); /* nobody frees what a neighbour still reads */
    shmem_free(raw);
    shmem_free(f);
    shmem_free(source);
    FINISH();
}
