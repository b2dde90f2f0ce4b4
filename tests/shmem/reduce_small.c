/* shmem_reduce_small_types: the 8- and 16-bit integer types of OpenSHMEM 1.5's reduction tables
 * (int8_t, int16_t, uint8_t, uint16_t; char, signed char, short and their unsigned forms),
 * which the front end hands to hgas's collectives: values that wrap around as the C types do,
 * every op, on the world and on a strided team of the even PEs, typed and type-generic, and the
 * typed broadcast/collect/fcollect/alltoall of the same types. */
#include <stdint.h>
#include <string.h>

#include "check.h"

#define COUNT 37 /* several elements, not a power of two */

/* The sum of 100 per PE in T, computed as the C type wraps. */
#define WRAPPED_SUM(T, k, per) ((T)(uint64_t)((uint64_t)(k) * (per)))

static void world(int me, int n) {
    int8_t *i8 = shmem_malloc(COUNT), *i8d = shmem_malloc(COUNT);
    uint8_t *u8 = shmem_malloc(COUNT), *u8d = shmem_malloc(COUNT);
    int16_t *i16 = shmem_malloc(COUNT * 2), *i16d = shmem_malloc(COUNT * 2);
    uint16_t *u16 = shmem_malloc(COUNT * 2), *u16d = shmem_malloc(COUNT * 2);
    for (int i = 0; i < COUNT; ++i) {
        i8[i] = 100;                        /* n * 100 wraps in int8 from 2 PEs */
        u8[i] = (uint8_t)(200 + (me + i) % 50);
        i16[i] = (int16_t)(-30000 - me);    /* min */
        u16[i] = (uint16_t)(1u << ((me + i) % 16));
    }
    CHECK(shmem_int8_sum_reduce(SHMEM_TEAM_WORLD, i8d, i8, COUNT) == 0, "int8 sum");
    for (int i = 0; i < COUNT; ++i)
        CHECK(i8d[i] == WRAPPED_SUM(int8_t, n, 100), "int8 sum[%d] = %d, want %d", i, i8d[i], WRAPPED_SUM(int8_t, n, 100));
    CHECK(shmem_uint8_sum_reduce(SHMEM_TEAM_WORLD, u8d, u8, COUNT) == 0, "uint8 sum");
    for (int i = 0; i < COUNT; ++i) {
        uint8_t want = 0;
        for (int p = 0; p < n; ++p) want = (uint8_t)(want + 200 + (p + i) % 50);
        CHECK(u8d[i] == want, "uint8 sum[%d] = %u, want %u", i, u8d[i], want);
    }
    CHECK(shmem_uint8_max_reduce(SHMEM_TEAM_WORLD, u8d, u8, COUNT) == 0, "uint8 max");
    for (int i = 0; i < COUNT; ++i) {
        int want = 0;
        for (int p = 0; p < n; ++p) want = want > 200 + (p + i) % 50 ? want : 200 + (p + i) % 50;
        CHECK(u8d[i] == want, "uint8 max[%d] = %u, want %d", i, u8d[i], want);
    }
    CHECK(shmem_int16_min_reduce(SHMEM_TEAM_WORLD, i16d, i16, COUNT) == 0, "int16 min");
    for (int i = 0; i < COUNT; ++i) CHECK(i16d[i] == -30000 - (n - 1), "int16 min[%d] = %d", i, i16d[i]);
    /* prod in place: 300^n wraps in int16 from 2 PEs (90000 -> 24464) */
    for (int i = 0; i < COUNT; ++i) i16[i] = 300;
    CHECK(shmem_int16_prod_reduce(SHMEM_TEAM_WORLD, i16, i16, COUNT) == 0, "int16 prod");
    uint16_t prod = 1;
    for (int p = 0; p < n; ++p) prod = (uint16_t)(prod * 300u);
    for (int i = 0; i < COUNT; ++i) CHECK(i16[i] == (int16_t)prod, "int16 prod[%d] = %d, want %d", i, i16[i], (int16_t)prod);
    CHECK(shmem_uint16_or_reduce(SHMEM_TEAM_WORLD, u16d, u16, COUNT) == 0, "uint16 or");
    for (int i = 0; i < COUNT; ++i) {
        uint16_t want = 0;
        for (int p = 0; p < n; ++p) want = (uint16_t)(want | 1u << ((p + i) % 16));
        CHECK(u16d[i] == want, "uint16 or[%d] = %#x, want %#x", i, u16d[i], want);
    }
    CHECK(shmem_uint16_xor_reduce(SHMEM_TEAM_WORLD, u16d, u16, COUNT) == 0, "uint16 xor");
    for (int i = 0; i < COUNT; ++i) {
        uint16_t want = 0;
        for (int p = 0; p < n; ++p) want = (uint16_t)(want ^ 1u << ((p + i) % 16));
        CHECK(u16d[i] == want, "uint16 xor[%d] = %#x, want %#x", i, u16d[i], want);
    }
    for (int i = 0; i < COUNT; ++i) i8[i] = (int8_t)(0xf0 | me % 16);
    CHECK(shmem_int8_and_reduce(SHMEM_TEAM_WORLD, i8d, i8, COUNT) == 0, "int8 and");
    int8_t and8 = (int8_t)0xff;
    for (int p = 0; p < n; ++p) and8 = (int8_t)(and8 & (0xf0 | p % 16));
    for (int i = 0; i < COUNT; ++i) CHECK(i8d[i] == and8, "int8 and[%d] = %d, want %d", i, i8d[i], and8);

    /* char and short (the same widths under the C type names), generic forms */
    char *c = shmem_malloc(2);
    short *s = shmem_malloc(2 * sizeof(short));
    c[1] = (char)('a' + me % 26);
    s[1] = (short)(1000 * (me + 1));
    CHECK(shmem_max_reduce(SHMEM_TEAM_WORLD, &c[0], &c[1], 1) == 0, "generic char max");
    CHECK(c[0] == (char)('a' + (n - 1 < 26 ? n - 1 : 25)), "char max %c", c[0]);
    CHECK(shmem_sum_reduce(SHMEM_TEAM_WORLD, &s[0], &s[1], 1) == 0, "generic short sum");
    CHECK(s[0] == (short)(uint16_t)(1000 * n * (n + 1) / 2), "short sum %d", s[0]);
    shmem_free(s);
    shmem_free(c);
    shmem_free(u16d);
    shmem_free(u16);
    shmem_free(i16d);
    shmem_free(i16);
    shmem_free(u8d);
    shmem_free(u8);
    shmem_free(i8d);
    shmem_free(i8);
}

/* On the team of the even PEs: reductions, then the typed collectives of the same types. */
static void even_team(int me, int n) {
    shmem_team_t even;
    CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 2, (n + 1) / 2, NULL, 0, &even) == 0, "split");
    const int tn = (n + 1) / 2;
    int8_t *i8 = shmem_malloc(4 * tn), *i8d = shmem_malloc(4 * tn);
    uint16_t *u16 = shmem_malloc(2 * 4 * tn), *u16d = shmem_malloc(2 * 4 * tn);
    if (me % 2 == 0) {
        CHECK(even != SHMEM_TEAM_INVALID && shmem_team_n_pes(even) == tn, "even team of %d", tn);
        const int tme = shmem_team_my_pe(even);
        i8[0] = 100;
        CHECK(shmem_sum_reduce(even, i8d, i8, 1) == 0, "team generic int8 sum");
        CHECK(i8d[0] == WRAPPED_SUM(int8_t, tn, 100), "team int8 sum %d", i8d[0]);
        u16[0] = (uint16_t)(0xff00u | 1u << tme);
        CHECK(shmem_uint16_and_reduce(even, u16d, u16, 1) == 0, "team uint16 and");
        CHECK(u16d[0] == (tn == 1 ? 0xff01u : 0xff00u), "team uint16 and %#x", u16d[0]);
        u16[1] = (uint16_t)(60000 + tme);
        CHECK(shmem_max_reduce(even, u16d + 1, u16 + 1, 1) == 0, "team generic uint16 max");
        CHECK(u16d[1] == 60000 + tn - 1, "team uint16 max %u", u16d[1]);

        /* typed collectives: broadcast from the last member, fcollect, collect, alltoall */
        i8[0] = (int8_t)(-1 - tme);
        CHECK(shmem_int8_broadcast(even, i8d, i8, 1, tn - 1) == 0, "int8 broadcast");
        CHECK(i8d[0] == (int8_t)(-tn), "int8 broadcast %d", i8d[0]);
        u16[0] = (uint16_t)(65535 - tme);
        CHECK(shmem_uint16_fcollect(even, u16d, u16, 1) == 0, "uint16 fcollect");
        for (int p = 0; p < tn; ++p) CHECK(u16d[p] == 65535 - p, "uint16 fcollect[%d] = %u", p, u16d[p]);
        int16_t *i16 = (int16_t *)u16, *i16d = (int16_t *)u16d;
        for (int k = 0; k <= tme; ++k) i16[k] = (int16_t)(-100 * tme - k); /* member m brings m + 1 */
        CHECK(shmem_int16_collect(even, i16d, i16, (size_t)tme + 1) == 0, "int16 collect");
        int at = 0;
        for (int p = 0; p < tn; ++p)
            for (int k = 0; k <= p; ++k, ++at) CHECK(i16d[at] == -100 * p - k, "int16 collect[%d] = %d", at, i16d[at]);
        uint8_t *u8 = (uint8_t *)i8, *u8d = (uint8_t *)i8d;
        for (int p = 0; p < tn; ++p) u8[p] = (uint8_t)(16 * tme + p + 128);
        CHECK(shmem_uint8_alltoall(even, u8d, u8, 1) == 0, "uint8 alltoall");
        for (int p = 0; p < tn; ++p) CHECK(u8d[p] == 16 * p + tme + 128, "uint8 alltoall[%d] = %u", p, u8d[p]);
        shmem_team_sync(even);
        shmem_team_destroy(even);
    } else {
        CHECK(even == SHMEM_TEAM_INVALID, "odd PE outside the team");
    }
    shmem_barrier_all();
    shmem_free(u16d);
    shmem_free(u16);
    shmem_free(i8d);
    shmem_free(i8);
}

int main(void) {
    shmem_init();
    const int me = shmem_my_pe(), n = shmem_n_pes();
    world(me, n);
    even_team(me, n);
    FINISH();
}
