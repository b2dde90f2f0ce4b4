/* peer_shmem — the hgas-bench measurements written against OpenSHMEM (1.4, as Open MPI
 * 4.1's OSHMEM ships it; 1.5 implementations build it too), so that hgas-bench can measure
 * the shm path against an established implementation in the same run. Built by hgas-bench
 * with `oshcc -O2 -I<this folder>` into a temporary folder when oshcc is on PATH, run with
 * `oshrun -np 2`. Same options, method and output as lat.c and bw.c (bench_common.h); impl
 * "oshmem". The measurements mirror lat.c / bw.c operation for operation:
 *
 *   put_lat         ping-pong: shmem_long_p(flag) for 8 B; shmem_putmem + shmem_fence +
 *                   shmem_long_p(flag) for longer messages; shmem_long_wait_until
 *   put_signal_lat  OpenSHMEM 1.4 has no put-with-signal: the same as put_lat (the 1.4
 *                   idiom), reported under this name with a note
 *   get_lat         shmem_getmem, per operation
 *   fadd_lat        shmem_long_atomic_fetch_add, per operation
 *   barrier_lat     shmem_barrier_all, per operation
 *   put_bw, get_bw  windows of shmem_putmem_nbi / shmem_getmem_nbi, then shmem_quiet
 *   put_signal_bw   windows of shmem_putmem_nbi + shmem_fence + shmem_long_atomic_add
 *                   (signal += 1; the 1.4 idiom), then shmem_quiet */
#include "bench_common.h"

#include <shmem.h>

enum { MAXB = 64 };
enum kind { PUT, GET, PUT_SIGNAL };

static int me, peer;
static unsigned char *sym;
static long *flag; /* [0] ping-pong flag / signal, [8] counter, [9] check result */
static unsigned char *loc;

static long lat_iters(const bench_opts_t *o, size_t bytes) {
    return bench_iters(bytes, o->quick ? 2000 : 10000, o->quick ? 8e6 : 32e6, o->quick ? 3 : 10);
}

static void send_put(size_t s, long v) {
    if (s > 8) {
        shmem_putmem(sym, loc, s, peer);
        shmem_fence();
    }
    shmem_long_p(&flag[0], v, peer);
}

static void pingpong(const bench_opts_t *o, const char *name, size_t s, const char *note) {
    const long iters = lat_iters(o, s);
    const long warm = iters / 10 + 1;
    double samples[MAXB];
    long round = 0;
    int verified = 1;
    bench_fill(loc, s, 1);
    shmem_barrier_all();
    flag[0] = 0;
    flag[9] = 0;
    shmem_barrier_all();
    for (int b = -1; b < o->batches; ++b) {
        const long n = b < 0 ? warm : iters;
        uint64_t t0 = bench_now_ns();
        for (long i = 0; i < n; ++i) {
            ++round;
            if (me == 0) {
                send_put(s, round);
                shmem_long_wait_until(&flag[0], SHMEM_CMP_GE, round);
            } else {
                shmem_long_wait_until(&flag[0], SHMEM_CMP_GE, round);
                if (round == 1) {
                    long bad = s <= 8 ? (flag[0] == 1 ? -1 : 0) : bench_check(sym, s, 1);
                    if (bad >= 0) {
                        fprintf(stderr, "peer_shmem: %s %zu B: byte %ld of the received message is wrong\n", name, s,
                                bad);
                        verified = 0;
                    }
                }
                send_put(s, round);
            }
        }
        uint64_t t1 = bench_now_ns();
        if (b >= 0) samples[b] = (double)(t1 - t0) / 1e3 / (2.0 * (double)n);
    }
    shmem_barrier_all();
    if (me == 1 && !verified) shmem_long_atomic_add(&flag[9], 1, 0);
    shmem_barrier_all();
    if (me == 0) bench_report_lat(o, name, s, samples, o->batches, iters, flag[9] == 0, note);
    shmem_barrier_all();
}

static void get_lat(const bench_opts_t *o, size_t s) {
    const long iters = lat_iters(o, s);
    double samples[MAXB];
    if (me == 1) bench_fill(sym, s, 2);
    shmem_barrier_all();
    if (me == 0) {
        memset(loc, 0, s);
        shmem_getmem(loc, sym, s, 1);
        long bad = bench_check(loc, s, 2);
        if (bad >= 0) fprintf(stderr, "peer_shmem: get_lat %zu B: byte %ld is wrong\n", s, bad);
        for (long i = 0; i < iters / 10 + 1; ++i) shmem_getmem(loc, sym, s, 1);
        for (int b = 0; b < o->batches; ++b) {
            uint64_t t0 = bench_now_ns();
            for (long i = 0; i < iters; ++i) shmem_getmem(loc, sym, s, 1);
            samples[b] = (double)(bench_now_ns() - t0) / 1e3 / (double)iters;
        }
        bench_report_lat(o, "get_lat", s, samples, o->batches, iters, bad < 0, NULL);
    }
    shmem_barrier_all();
}

static void fadd_lat(const bench_opts_t *o) {
    const long iters = o->quick ? 5000 : 20000;
    double samples[MAXB];
    flag[8] = 0;
    shmem_barrier_all();
    if (me == 0) {
        long old = shmem_long_atomic_fetch_add(&flag[8], 1, 1), total = 1;
        int ok = old == 0;
        for (long i = 0; i < iters / 10; ++i, ++total) old = shmem_long_atomic_fetch_add(&flag[8], 1, 1);
        for (int b = 0; b < o->batches; ++b) {
            uint64_t t0 = bench_now_ns();
            for (long i = 0; i < iters; ++i) old = shmem_long_atomic_fetch_add(&flag[8], 1, 1);
            samples[b] = (double)(bench_now_ns() - t0) / 1e3 / (double)iters;
            total += iters;
        }
        ok = ok && old == total - 1;
        bench_report_lat(o, "fadd_lat", 8, samples, o->batches, iters, ok, NULL);
    }
    shmem_barrier_all();
}

static void barrier_lat(const bench_opts_t *o) {
    const long iters = o->quick ? 2000 : 10000;
    double samples[MAXB];
    for (long i = 0; i < iters / 10; ++i) shmem_barrier_all();
    for (int b = 0; b < o->batches; ++b) {
        uint64_t t0 = bench_now_ns();
        for (long i = 0; i < iters; ++i) shmem_barrier_all();
        samples[b] = (double)(bench_now_ns() - t0) / 1e3 / (double)iters;
    }
    if (me == 0) bench_report_lat(o, "barrier_lat", 0, samples, o->batches, iters, 1, NULL);
    shmem_barrier_all();
}

static long window_of(size_t s) {
    if (s <= 65536) return 64;
    long w = (long)((4u << 20) / s);
    return w < 1 ? 1 : w;
}

static void issue(enum kind k, size_t s, long window) {
    for (long w = 0; w < window; ++w) {
        switch (k) {
        case PUT: shmem_putmem_nbi(sym, loc, s, 1); break;
        case GET: shmem_getmem_nbi(loc, sym, s, 1); break;
        case PUT_SIGNAL:
            shmem_putmem_nbi(sym, loc, s, 1);
            shmem_fence();
            shmem_long_atomic_add(&flag[0], 1, 1);
            break;
        }
    }
    shmem_quiet();
}

static void bw(const bench_opts_t *o, const char *name, enum kind k, size_t s, const char *note) {
    const long window = window_of(s);
    const long rounds = bench_iters(s * (size_t)window, o->quick ? 200 : 1000, o->quick ? 16e6 : 64e6, 2);
    double samples[MAXB];
    int ok = 1;
    flag[0] = 0;
    flag[9] = 0;
    if (k == GET) {
        if (me == 1) bench_fill(sym, s, 3);
    } else if (me == 0) {
        bench_fill(loc, s, 3);
    }
    shmem_barrier_all();
    if (me == 0) issue(k, s, 1);
    shmem_barrier_all();
    if (k == GET && me == 0) {
        long bad = bench_check(loc, s, 3);
        if (bad >= 0) fprintf(stderr, "peer_shmem: %s %zu B: byte %ld is wrong\n", name, s, bad), ok = 0;
    } else if (k != GET && me == 1) {
        long bad = bench_check(sym, s, 3);
        if (bad >= 0 || (k == PUT_SIGNAL && flag[0] != 1)) {
            fprintf(stderr, "peer_shmem: %s %zu B: byte %ld is wrong or the signal is %ld\n", name, s, bad, flag[0]);
            shmem_long_atomic_add(&flag[9], 1, 0);
        }
    }
    shmem_barrier_all();
    if (me == 0) {
        ok = ok && flag[9] == 0;
        for (long r = 0; r < rounds / 10 + 1; ++r) issue(k, s, window);
        for (int b = 0; b < o->batches; ++b) {
            uint64_t t0 = bench_now_ns();
            for (long r = 0; r < rounds; ++r) issue(k, s, window);
            samples[b] = (double)(bench_now_ns() - t0) / 1e9;
        }
        bench_report_bw(o, name, s, samples, o->batches, rounds * window, (double)s * (double)window * (double)rounds,
                        ok, note);
    }
    shmem_barrier_all();
}

int main(int argc, char **argv) {
    bench_opts_t o;
    bench_parse(argc, argv, &o, "oshmem");
    if (o.batches > MAXB) o.batches = MAXB;
    bench_heap_env("SHMEM_SYMMETRIC_SIZE", &o);
    shmem_init();
    me = shmem_my_pe();
    if (shmem_n_pes() != 2) {
        if (me == 0) fprintf(stderr, "peer_shmem: run with 2 PEs (oshrun -np 2), not %d\n", shmem_n_pes());
        shmem_finalize();
        return 2;
    }
    peer = 1 - me;
    bench_pin(&o, me);
    sym = (unsigned char *)shmem_malloc(o.max_size);
    flag = (long *)shmem_calloc(16, sizeof(long));
    loc = (unsigned char *)malloc(o.max_size);
    if (!sym || !flag || !loc) {
        fprintf(stderr, "peer_shmem: cannot allocate %zu bytes (SHMEM_SYMMETRIC_SIZE?)\n", o.max_size);
        shmem_global_exit(1);
    }
    memset(loc, 0, o.max_size);
    shmem_barrier_all();
    const char *emu = "OpenSHMEM 1.4 idiom: putmem + fence + p (no put-with-signal)";
    for (size_t s = o.min_size; s; s = bench_next_size(&o, s))
        if (bench_selected(&o, "put_lat")) pingpong(&o, "put_lat", s, NULL);
    for (size_t s = o.min_size; s; s = bench_next_size(&o, s))
        if (bench_selected(&o, "put_signal_lat")) pingpong(&o, "put_signal_lat", s, emu);
    for (size_t s = o.min_size; s; s = bench_next_size(&o, s))
        if (bench_selected(&o, "get_lat")) get_lat(&o, s);
    if (bench_selected(&o, "fadd_lat")) fadd_lat(&o);
    if (bench_selected(&o, "barrier_lat")) barrier_lat(&o);
    for (size_t s = o.min_size; s; s = bench_next_size(&o, s))
        if (bench_selected(&o, "put_bw")) bw(&o, "put_bw", PUT, s, NULL);
    for (size_t s = o.min_size; s; s = bench_next_size(&o, s))
        if (bench_selected(&o, "get_bw")) bw(&o, "get_bw", GET, s, NULL);
    for (size_t s = o.min_size; s; s = bench_next_size(&o, s))
        if (bench_selected(&o, "put_signal_bw"))
            bw(&o, "put_signal_bw", PUT_SIGNAL, s, "OpenSHMEM 1.4 idiom: putmem_nbi + fence + atomic_add");
    free(loc);
    shmem_free(flag);
    shmem_free(sym);
    shmem_finalize();
    return 0;
}
