// The type-generic interfaces from C++ (overloads in <shmem.h>): the same forms as the C11
// generics test (context first, _nbi fetching atomics, signed fixed-width bitwise types,
// wait/test all/any/some, deprecated names), and the complex reductions, which C++ programs
// could not call: with std::complex and with C's complex types (a GNU extension in C++).
#include <shmem.h>

#include <complex>
#include <cstdint>
#include <cstdio>
#include <vector>

static int failures = 0;
#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            std::fprintf(stderr, "PE %d: %s:%d: check failed: %s: ", shmem_my_pe(), __FILE__, __LINE__, #cond); \
            std::fprintf(stderr, __VA_ARGS__);                                                     \
            std::fputc('\n', stderr);                                                              \
            ++failures;                                                                            \
        }                                                                                          \
    } while (0)

int main() {
    shmem_init();
    const int me = shmem_my_pe(), n = shmem_n_pes(), right = (me + 1) % n, left = (me + n - 1) % n;
    shmem_ctx_t ctx;
    CHECK(shmem_ctx_create(0, &ctx) == 0, "ctx_create");

    auto *box = static_cast<long *>(shmem_calloc(8, sizeof(long)));
    long src[2] = {me * 10L + 1, me * 10L + 2}, got[2] = {0, 0};
    shmem_put(box, src, 2, right);
    shmem_p(ctx, &box[2], me * 10L + 7, right);
    shmem_put_nbi(ctx, &box[4], src, 2, right);
    shmem_ctx_quiet(ctx);
    shmem_barrier_all();
    CHECK(box[0] == left * 10 + 1 && box[1] == left * 10 + 2 && box[2] == left * 10 + 7 && box[5] == left * 10 + 2,
          "puts: %ld %ld %ld %ld", box[0], box[1], box[2], box[5]);
    shmem_get(ctx, got, box, 2, right);
    CHECK(got[0] == me * 10 + 1 && got[1] == me * 10 + 2, "ctx get %ld %ld", got[0], got[1]);
    CHECK(shmem_g(ctx, &box[2], right) == me * 10 + 7 && shmem_g(&box[2], right) == me * 10 + 7, "g");
    shmem_barrier_all();

    auto *a = static_cast<long *>(shmem_calloc(2, sizeof(long)));
    long f = -1;
    shmem_atomic_add(ctx, &a[0], 2L, 0);
    shmem_atomic_inc(&a[0], 0);
    shmem_atomic_fetch_add_nbi(ctx, &f, &a[1], 5L, 0);
    shmem_ctx_quiet(ctx);
    CHECK(f >= 0 && f % 5 == 0, "fetch_add_nbi %ld", f);
    auto *b32 = static_cast<int32_t *>(shmem_calloc(1, sizeof(int32_t)));
    auto *b64 = static_cast<int64_t *>(shmem_calloc(1, sizeof(int64_t)));
    shmem_barrier_all();
    shmem_atomic_or(ctx, b32, int32_t(1) << (me % 31), 0);
    int64_t old64 = 0;
    shmem_atomic_fetch_xor_nbi(&old64, b64, int64_t(1) << (me % 63), 0);
    shmem_ctx_quiet(ctx);
    shmem_quiet();
    shmem_barrier_all();
    if (me == 0) {
        int32_t want32 = 0;
        int64_t want64 = 0;
        for (int p = 0; p < n; ++p) {
            want32 |= int32_t(1) << (p % 31);
            want64 ^= int64_t(1) << (p % 63);
        }
        CHECK(a[0] == 3L * n && a[1] == 5L * n, "add/inc/fetch_add_nbi: %ld %ld", a[0], a[1]);
        CHECK(*b32 == want32 && *b64 == want64, "int32 or %d, int64 fetch_xor_nbi %lld", int(*b32), (long long)*b64);
        CHECK(shmem_atomic_fetch(ctx, &a[0], 0) == 3L * n, "ctx fetch");
        CHECK(shmem_atomic_compare_swap(&a[0], 3L * n, 1L, 0) == 3L * n && a[0] == 1, "compare_swap");
        shmem_set(&a[1], 9L, 0);
        CHECK(shmem_fetch(&a[1], 0) == 9 && shmem_finc(&a[1], 0) == 9 && a[1] == 10, "deprecated set/fetch/finc");
    }
    shmem_barrier_all();

    auto *flags = static_cast<int *>(shmem_calloc(size_t(n), sizeof(int)));
    for (int p = 0; p < n; ++p) shmem_p(&flags[me], me + 1, p);
    std::vector<int> want(static_cast<size_t>(n));
    std::vector<size_t> idx(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) want[size_t(i)] = i + 1;
    shmem_wait_until_all_vector(flags, size_t(n), nullptr, SHMEM_CMP_EQ, want.data());
    CHECK(shmem_wait_until_some(flags, size_t(n), idx.data(), nullptr, SHMEM_CMP_GE, 1) == size_t(n), "some");
    CHECK(shmem_test_any(flags, size_t(n), nullptr, SHMEM_CMP_EQ, n) == size_t(n - 1), "test_any");
    CHECK(shmem_test_all(flags, size_t(n), nullptr, SHMEM_CMP_GT, 0) == 1, "test_all");
    shmem_wait_until(&flags[0], SHMEM_CMP_EQ, 1);
    CHECK(shmem_test(&flags[0], SHMEM_CMP_EQ, 1) == 1, "test");
    shmem_barrier_all();

    // Complex reductions: std::complex through the typed and generic names, C's complex type
    // through the typed name and the old *_to_all.
    auto *zd = static_cast<std::complex<double> *>(shmem_calloc(2, sizeof(std::complex<double>)));
    auto *zf = static_cast<std::complex<float> *>(shmem_calloc(2, sizeof(std::complex<float>)));
    zd[1] = std::complex<double>(me, 1);
    zf[1] = std::complex<float>(0, 1);
    shmem_barrier_all();
    CHECK(shmem_complexd_sum_reduce(SHMEM_TEAM_WORLD, &zd[0], &zd[1], 1) == 0, "complexd_sum_reduce");
    CHECK(zd[0] == std::complex<double>(n * (n - 1) / 2.0, n), "complexd sum %g%+gi", zd[0].real(), zd[0].imag());
    CHECK(shmem_prod_reduce(SHMEM_TEAM_WORLD, &zf[0], &zf[1], 1) == 0, "generic complexf prod");
    std::complex<float> wantf(1, 0);
    for (int p = 0; p < n; ++p) wantf *= std::complex<float>(0, 1);
    CHECK(zf[0] == wantf, "complexf prod %g%+gi", double(zf[0].real()), double(zf[0].imag()));
#if defined(__GNUC__)
    __extension__ typedef double _Complex cdouble;
    auto *cz = reinterpret_cast<cdouble *>(zd);
    CHECK(shmem_complexd_prod_reduce(SHMEM_TEAM_WORLD, &cz[0], &cz[1], 1) == 0, "C complexd prod");
    std::complex<double> wantd(1, 0);
    for (int p = 0; p < n; ++p) wantd *= std::complex<double>(p, 1);
    CHECK(zd[0] == wantd, "C complexd prod %g%+gi", zd[0].real(), zd[0].imag());
    static long psync[SHMEM_REDUCE_SYNC_SIZE];
    for (long &w : psync) w = SHMEM_SYNC_VALUE;
    shmem_barrier_all();
    shmem_complexd_sum_to_all(&cz[0], &cz[1], 1, 0, 0, n, &cz[0], psync);
    CHECK(zd[0] == std::complex<double>(n * (n - 1) / 2.0, n), "complexd_sum_to_all %g%+gi", zd[0].real(), zd[0].imag());
#endif
    shmem_ctx_destroy(ctx);
    shmem_finalize();
    if (failures) std::fprintf(stderr, "PE %d: %d check(s) failed\n", me, failures);
    else if (me == 0) std::printf("generics_cxx.cpp: all checks passed\n");
    return failures ? 1 : 0;
}
