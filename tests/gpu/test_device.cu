// The device API on GPUs (ctest label gpu; tools/gpu-check.sh runs it): every operation in
// every scope with value checks, data visible before its signal, the device barrier, atomics
// from many blocks at once, stream-ordered operations, seed 003's building blocks, errors and
// deadlines. Runs on 1 and 2 ranks; with HGAS_DEVICE_PROXY=force every operation -- to peers
// the GPU could store to, and to itself -- goes through the proxy; with HGAS_PATH=staged peers'
// GPU memory is unmapped and the proxy is taken for them as it would be across nodes.
//
// Every wait is bounded: kernels give up after HGAS_TIMEOUT (the tests set 20 s) and record
// an error; the host waits with hgas_stream_sync, never cudaDeviceSynchronize.
#include <hgas/hgas_device.cuh>

#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "gpu_test.hpp"

namespace {

namespace hd = hgas::device;
using hd::scope;

using namespace gpu_test;

template <scope S>
__device__ unsigned grank() {
    return S == scope::thread ? 0 : S == scope::warp ? (threadIdx.x & 31) : threadIdx.x;
}
template <scope S>
__device__ unsigned gsize() {
    return S == scope::thread ? 1 : S == scope::warp ? 32 : blockDim.x;
}
template <scope S>
__device__ void gsync() {
    if (S == scope::warp) __syncwarp();
    if (S == scope::block) __syncthreads();
}

__host__ __device__ inline unsigned char pat(int writer, int round, size_t i) {
    return static_cast<unsigned char>(writer * 37 + round * 11 + i * 7 + (i >> 9));
}

// ---- put / get ------------------------------------------------------------------------------

// This rank's `bytes` (from src + mis) go to slot [me] (+ mis) of `dst` on every rank.
template <scope S>
__global__ void k_put_all(hd::ctx c, char *dst, const char *src, size_t bytes, size_t stride, int mis, int nbi) {
    for (int t = 0; t < c.n; ++t) {
        if (nbi) hd::put_nbi<S>(c, dst + c.me * stride + mis, src + mis, bytes, t);
        else hd::put<S>(c, dst + c.me * stride + mis, src + mis, bytes, t);
    }
    if (nbi) hd::quiet<S>(c);
}

// Slot [me] of `sym` on every rank t back into local[t].
template <scope S>
__global__ void k_get_all(hd::ctx c, char *local, const char *sym, size_t bytes, size_t stride, int mis, int nbi) {
    for (int t = 0; t < c.n; ++t) {
        if (nbi) hd::get_nbi<S>(c, local + t * stride + mis, sym + c.me * stride + mis, bytes, t);
        else hd::get<S>(c, local + t * stride + mis, sym + c.me * stride + mis, bytes, t);
    }
    if (nbi) hd::quiet<S>(c);
}

template <scope S>
void put_get_scope() {
    rank_gpu g;
    g.open(true);
    // 48, 4096 and 1 MiB with mis 0: both ends and the length 16-byte aligned (the copy's
    // fast path); the others and mis 3 take the general one.
    const size_t sizes[] = {1, 8, 13, 48, 4096, 4096 + 3, 1u << 20, (1u << 20) + 5};
    const size_t stride = (1u << 20) + 128;
    char *sym, *src, *local;
    HGAS_OK_OR_FAIL(hgas_malloc_kind(stride * n(), HGAS_KIND_CUDA, reinterpret_cast<void **>(&sym)));
    CK(cudaMalloc(&src, stride));
    CK(cudaMalloc(&local, stride * n()));
    std::vector<unsigned char> h(stride * n());
    int round = 0;
    for (size_t bytes : sizes)
        for (int mis : {0, 3})
            for (int nbi : {0, 1}) {
                ++round;
                std::vector<unsigned char> p(stride);
                for (size_t i = 0; i < stride; ++i) p[i] = pat(me(), round, i);
                CK(cudaMemcpy(src, p.data(), stride, cudaMemcpyHostToDevice));
                CK(cudaMemset(sym, 0, stride * n()));
                CK(cudaStreamSynchronize(nullptr));  // not the device: a stuck stream must not hang the rest
                HGAS_OK_OR_FAIL(hgas_barrier());
                k_put_all<S><<<1, threads_of<S>(), 0, g.s>>>(g.c, sym, src, bytes, stride, mis, nbi);
                CK(cudaGetLastError());
                g.sync();
                HGAS_OK_OR_FAIL(hgas_barrier());
                CK(cudaMemcpy(h.data(), sym, stride * n(), cudaMemcpyDeviceToHost));
                for (int w = 0; w < n(); ++w)
                    for (size_t i = 0; i < bytes; ++i)
                        ASSERT_EQ(h[w * stride + mis + i], pat(w, round, mis + i))
                            << name_of(S) << " put" << (nbi ? "_nbi" : "") << " of " << bytes << " B (misaligned by "
                            << mis << ") from rank " << w << ": byte " << i;
                // Back from every rank through get: what this rank put there.
                CK(cudaMemset(local, 0, stride * n()));
                CK(cudaStreamSynchronize(nullptr));  // not the device: a stuck stream must not hang the rest
                k_get_all<S><<<1, threads_of<S>(), 0, g.s>>>(g.c, local, sym, bytes, stride, mis, nbi);
                CK(cudaGetLastError());
                g.sync();
                CK(cudaMemcpy(h.data(), local, stride * n(), cudaMemcpyDeviceToHost));
                for (int t = 0; t < n(); ++t)
                    for (size_t i = 0; i < bytes; ++i)
                        ASSERT_EQ(h[t * stride + mis + i], pat(me(), round, mis + i))
                            << name_of(S) << " get" << (nbi ? "_nbi" : "") << " of " << bytes << " B from rank " << t
                            << ": byte " << i;
                HGAS_OK_OR_FAIL(hgas_barrier());
            }
    CK(cudaFree(src));
    CK(cudaFree(local));
    HGAS_OK_OR_FAIL(hgas_free(sym));
}

TEST(Device, ContextMapsTheHeaps) {
    rank_gpu g;
    g.open(true);
    EXPECT_EQ(g.c.me, me());
    EXPECT_EQ(g.c.n, n());
    EXPECT_GT(g.c.win[0].size, 0u) << "the cuda heap";
    EXPECT_EQ(g.c.win[0].segment, HGAS_SEG_CUDA_SYMMETRIC);
    EXPECT_GT(g.c.win[1].size, 0u) << "the host heap";
    EXPECT_NE(g.c.ring, nullptr);
    EXPECT_EQ(hgas_device_status(), HGAS_OK) << hgas_last_error();
}

TEST(Device, PutGetThread) { put_get_scope<scope::thread>(); }
TEST(Device, PutGetWarp) { put_get_scope<scope::warp>(); }
TEST(Device, PutGetBlock) { put_get_scope<scope::block>(); }

// Host-heap targets: registered host memory is stored to directly (or through the proxy).
TEST(Device, PutIntoTheHostHeap) {
    rank_gpu g;
    g.open(true);
    const size_t bytes = 5000;
    char *hsym, *src;
    HGAS_OK_OR_FAIL(hgas_malloc_kind(bytes * n(), HGAS_KIND_HOST, reinterpret_cast<void **>(&hsym)));
    CK(cudaMalloc(&src, bytes));
    std::vector<unsigned char> p(bytes);
    for (size_t i = 0; i < bytes; ++i) p[i] = pat(me(), 99, i);
    CK(cudaMemcpy(src, p.data(), bytes, cudaMemcpyHostToDevice));
    // A pageable cudaMemcpy to the device may return before its DMA has landed, and g.s does
    // not wait for the legacy stream: without this the kernel could read a stale tail of src.
    CK(cudaStreamSynchronize(nullptr));
    k_put_all<scope::block><<<1, 256, 0, g.s>>>(g.c, hsym, src, bytes, bytes, 0, 0);
    CK(cudaGetLastError());
    g.sync();
    HGAS_OK_OR_FAIL(hgas_barrier());
    for (int w = 0; w < n(); ++w)
        for (size_t i = 0; i < bytes; ++i)
            ASSERT_EQ(static_cast<unsigned char>(hsym[w * bytes + i]), pat(w, 99, i)) << "from rank " << w << " byte " << i;
    HGAS_OK_OR_FAIL(hgas_barrier());
    CK(cudaFree(src));
    HGAS_OK_OR_FAIL(hgas_free(hsym));
}

// ---- ptr --------------------------------------------------------------------------------------

// mapped[t]: ptr(sym, t) is not null; through it, got[t] = sym[0] of rank t, and sym[1 + me] of
// rank t = 2000 + me. mapped[n], mapped[n + 1]: ptr of a rank that does not exist and of an
// address outside the heaps (both must be null).
__global__ void k_ptr(hd::ctx c, uint64_t *sym, uint64_t *not_sym, int *mapped, uint64_t *got, uint64_t **own) {
    for (int t = 0; t < c.n; ++t) {
        volatile uint64_t *q = hd::ptr(c, sym, t);
        mapped[t] = q != nullptr;
        if (!q) continue;
        got[t] = q[0];
        q[1 + c.me] = 2000 + c.me;
    }
    *own = hd::ptr(c, sym, c.me);
    mapped[c.n] = hd::ptr(c, sym, c.n) != nullptr;
    mapped[c.n + 1] = hd::ptr(c, not_sym, 0) != nullptr;
    __threadfence_system();
}

TEST(Device, PtrGivesPointersToMappedPeers) {
    rank_gpu g;
    g.open(true);
    const bool forced = (g.c.flags & HGAS_DEVICE_FORCE_PROXY) != 0;
    uint64_t *sym, *not_sym, *got, **own;
    int *mapped;
    HGAS_OK_OR_FAIL(hgas_malloc_kind(sizeof(uint64_t) * (1 + n()), HGAS_KIND_CUDA, reinterpret_cast<void **>(&sym)));
    CK(cudaMalloc(&not_sym, sizeof *not_sym));
    CK(cudaMalloc(&got, sizeof(uint64_t) * n()));
    CK(cudaMalloc(&own, sizeof *own));
    CK(cudaMalloc(&mapped, sizeof(int) * (n() + 2)));
    std::vector<uint64_t> init(1 + n(), 0);
    init[0] = 1000 + me();
    CK(cudaMemcpy(sym, init.data(), sizeof(uint64_t) * init.size(), cudaMemcpyHostToDevice));
    CK(cudaStreamSynchronize(nullptr));
    HGAS_OK_OR_FAIL(hgas_barrier());
    k_ptr<<<1, 1, 0, g.s>>>(g.c, sym, not_sym, mapped, got, own);
    CK(cudaGetLastError());
    g.sync();
    HGAS_OK_OR_FAIL(hgas_barrier());
    std::vector<int> m(n() + 2);
    std::vector<uint64_t> gv(n()), mine(1 + n());
    uint64_t *own_h = nullptr;
    CK(cudaMemcpy(m.data(), mapped, sizeof(int) * m.size(), cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(gv.data(), got, sizeof(uint64_t) * n(), cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(&own_h, own, sizeof own_h, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(mine.data(), sym, sizeof(uint64_t) * mine.size(), cudaMemcpyDeviceToHost));
    EXPECT_EQ(m[n()], 0) << "ptr of rank n() must be null";
    EXPECT_EQ(m[n() + 1], 0) << "ptr of memory outside the symmetric heaps must be null";
    if (forced) {
        for (int t = 0; t < n(); ++t) EXPECT_EQ(m[t], 0) << "HGAS_DEVICE_PROXY=force: ptr of rank " << t;
    } else {
        EXPECT_EQ(m[me()], 1) << "this rank's own heap is always mapped";
        EXPECT_EQ(own_h, sym) << "ptr of this rank is the address itself";
    }
    for (int t = 0; t < n(); ++t) {
        if (m[t]) EXPECT_EQ(gv[t], 1000u + t) << "loaded through ptr of rank " << t;
        // Every rank of these tests is on one node with the same settings: rank w mapped this
        // rank exactly when this rank mapped w.
        EXPECT_EQ(mine[1 + t], m[t] ? 2000u + t : 0u) << "stored through rank " << t << "'s ptr";
    }
    EXPECT_EQ(hgas_device_status(), HGAS_OK) << "ptr records no error: " << hgas_last_error();
    HGAS_OK_OR_FAIL(hgas_barrier());
    CK(cudaFree(not_sym));
    CK(cudaFree(got));
    CK(cudaFree(own));
    CK(cudaFree(mapped));
    HGAS_OK_OR_FAIL(hgas_free(sym));
}

// ---- p / g ----------------------------------------------------------------------------------

template <scope S>
__global__ void k_p(hd::ctx c, double *d, int32_t *i32, uint64_t *u, int salt) {
    for (int t = 0; t < c.n; ++t) {
        hd::p<S>(c, d + c.me, 1.5 + c.me + salt, t);
        hd::p<S>(c, i32 + c.me, -7 - c.me - salt, t);
        hd::p<S>(c, u + c.me, static_cast<uint64_t>((1ull << 40) + c.me + salt), t);
    }
    hd::quiet<S>(c);
}

template <scope S>
__global__ void k_g(hd::ctx c, const double *d, const int32_t *i32, const uint64_t *u, int salt, unsigned long long *bad) {
    for (int t = 0; t < c.n; ++t)
        for (int k = 0; k < c.n; ++k) {
            const double x = hd::g<S>(c, d + k, t);
            const int32_t y = hd::g<S>(c, i32 + k, t);
            const uint64_t z = hd::g<S>(c, u + k, t);
            if (grank<S>() == 0 && (x != 1.5 + k + salt || y != -7 - k - salt || z != (1ull << 40) + k + salt))
                atomicAdd(bad, 1ull);
        }
}

template <scope S>
void p_g_scope() {
    rank_gpu g;
    g.open(true);
    char *sym;
    HGAS_OK_OR_FAIL(hgas_malloc_kind(64 * 3 * n(), HGAS_KIND_CUDA, reinterpret_cast<void **>(&sym)));
    double *d = reinterpret_cast<double *>(sym);
    int32_t *i32 = reinterpret_cast<int32_t *>(sym + 64 * n());
    uint64_t *u = reinterpret_cast<uint64_t *>(sym + 128 * n());
    for (int salt = 0; salt < 3; ++salt) {
        k_p<S><<<1, threads_of<S>(), 0, g.s>>>(g.c, d, i32, u, salt);
        CK(cudaGetLastError());
        g.sync();
        HGAS_OK_OR_FAIL(hgas_barrier());
        k_g<S><<<1, threads_of<S>(), 0, g.s>>>(g.c, d, i32, u, salt, g.bad);
        CK(cudaGetLastError());
        g.sync();
        EXPECT_EQ(g.take_bad(), 0u) << name_of(S) << " g of values p put, salt " << salt;
        HGAS_OK_OR_FAIL(hgas_barrier());
    }
    HGAS_OK_OR_FAIL(hgas_free(sym));
}

TEST(Device, PGThread) { p_g_scope<scope::thread>(); }
TEST(Device, PGWarp) { p_g_scope<scope::warp>(); }
TEST(Device, PGBlock) { p_g_scope<scope::block>(); }

// ---- put_signal: the data is visible before the signal ----------------------------------------

// A ring: every rank sends `bytes` to its right neighbour with put_signal (SET to the round,
// or ADD 1), waits for its left neighbour's, checks every byte with plain loads, and acks; the
// next round overwrites only after the right neighbour's ack.
template <scope S>
__global__ void k_signal_ring(hd::ctx c, unsigned char *buf, unsigned char *src, size_t bytes, uint64_t *sig,
                              uint64_t *ack, int rounds, int add, int nbi, unsigned long long *bad) {
    const int right = (c.me + 1) % c.n, left = (c.me + c.n - 1) % c.n;
    for (int it = 1; it <= rounds; ++it) {
        for (size_t i = grank<S>(); i < bytes; i += gsize<S>()) src[i] = pat(c.me, it, i);
        gsync<S>();
        hd::signal_wait_until<S>(c, ack, HGAS_CMP_GE, static_cast<uint64_t>(it - 1));  // right has read round it-1
        if (nbi) hd::put_signal_nbi<S>(c, buf, src, bytes, sig, add ? 1 : it, add ? HGAS_SIGNAL_ADD : HGAS_SIGNAL_SET, right);
        else hd::put_signal<S>(c, buf, src, bytes, sig, add ? 1 : it, add ? HGAS_SIGNAL_ADD : HGAS_SIGNAL_SET, right);
        hd::signal_wait_until<S>(c, sig, HGAS_CMP_GE, static_cast<uint64_t>(it));
        unsigned long long wrong = 0;
        for (size_t i = grank<S>(); i < bytes; i += gsize<S>()) wrong += buf[i] != pat(left, it, i);
        if (wrong) atomicAdd(bad, wrong);
        gsync<S>();
        if (nbi) hd::quiet<S>(c);  // src is rewritten next round
        hd::signal_op<S>(c, ack, static_cast<uint64_t>(it), HGAS_SIGNAL_SET, left);
    }
    hd::quiet<S>(c);
}

template <scope S>
void signal_ring_scope() {
    rank_gpu g;
    g.open(true);
    const size_t bytes = 300000;
    unsigned char *buf, *src;
    uint64_t *words;
    HGAS_OK_OR_FAIL(hgas_malloc_kind(bytes, HGAS_KIND_CUDA, reinterpret_cast<void **>(&buf)));
    HGAS_OK_OR_FAIL(hgas_malloc_kind(bytes, HGAS_KIND_CUDA, reinterpret_cast<void **>(&src)));
    HGAS_OK_OR_FAIL(hgas_malloc_kind(128, HGAS_KIND_CUDA, reinterpret_cast<void **>(&words)));
    for (int add = 0; add < 2; ++add)
        for (int nbi = 0; nbi < 2; ++nbi) {
            CK(cudaMemset(words, 0, 128));
            CK(cudaStreamSynchronize(nullptr));  // not the device: a stuck stream must not hang the rest
            HGAS_OK_OR_FAIL(hgas_barrier());
            k_signal_ring<S><<<1, threads_of<S>(), 0, g.s>>>(g.c, buf, src, bytes, &words[0], &words[8], 12, add, nbi,
                                                              g.bad);
            CK(cudaGetLastError());
            g.sync();
            EXPECT_EQ(g.take_bad(), 0u) << name_of(S) << " put_signal" << (nbi ? "_nbi" : "") << (add ? " ADD" : " SET")
                                      << ": bytes read after the signal were not the data put before it";
            HGAS_OK_OR_FAIL(hgas_barrier());
        }
    HGAS_OK_OR_FAIL(hgas_free(words));
    HGAS_OK_OR_FAIL(hgas_free(src));
    HGAS_OK_OR_FAIL(hgas_free(buf));
}

TEST(Device, PutSignalThread) { signal_ring_scope<scope::thread>(); }
TEST(Device, PutSignalWarp) { signal_ring_scope<scope::warp>(); }
TEST(Device, PutSignalBlock) { signal_ring_scope<scope::block>(); }

// ---- atomics ----------------------------------------------------------------------------------

// Every group of every block: `per` fetch_adds of 1 on rank 0's counter; the leader keeps the
// old values. Many blocks at once, through the proxy too when it is forced.
template <scope S>
__global__ void k_fadd(hd::ctx c, unsigned long long *ctr, unsigned long long *olds, int per) {
    const unsigned groups_per_block = blockDim.x / gsize<S>();
    const unsigned group = blockIdx.x * groups_per_block + threadIdx.x / gsize<S>();
    for (int i = 0; i < per; ++i) {
        const unsigned long long o = hd::atomic_fetch_add<S>(c, ctr, 1ull, 0);
        if (grank<S>() == 0) olds[group * per + i] = o;
    }
}

// hgas_malloc_kind does not zero (like malloc); counters and signals start at 0 on every rank
// before any rank's kernel touches them.
void zero_sym(void *p, size_t bytes) {
    CK(cudaMemset(p, 0, bytes));
    CK(cudaDeviceSynchronize());
    HGAS_OK_OR_FAIL(hgas_barrier());
}

template <scope S>
void fadd_scope() {
    rank_gpu g;
    g.open(true);
    unsigned long long *ctr, *olds;
    const int blocks = 16, per = 8;
    const unsigned threads = 128, groups = blocks * threads / (S == scope::thread ? 1 : S == scope::warp ? 32 : threads);
    HGAS_OK_OR_FAIL(hgas_malloc_kind(64, HGAS_KIND_CUDA, reinterpret_cast<void **>(&ctr)));
    zero_sym(ctr, 64);
    CK(cudaMalloc(&olds, sizeof *olds * groups * per));
    k_fadd<S><<<blocks, threads, 0, g.s>>>(g.c, ctr, olds, per);
    CK(cudaGetLastError());
    g.sync();
    HGAS_OK_OR_FAIL(hgas_barrier());
    std::vector<unsigned long long> h(groups * per);
    CK(cudaMemcpy(h.data(), olds, h.size() * sizeof h[0], cudaMemcpyDeviceToHost));
    std::set<unsigned long long> uniq(h.begin(), h.end());
    EXPECT_EQ(uniq.size(), h.size()) << name_of(S) << " atomic_fetch_add: an old value came twice";
    if (me() == 0) {
        unsigned long long total = 0;
        CK(cudaMemcpy(&total, ctr, 8, cudaMemcpyDeviceToHost));
        EXPECT_EQ(total, static_cast<unsigned long long>(n()) * groups * per) << name_of(S);
    }
    HGAS_OK_OR_FAIL(hgas_barrier());
    CK(cudaFree(olds));
    HGAS_OK_OR_FAIL(hgas_free(ctr));
}

TEST(Device, FetchAddManyBlocksThread) { fadd_scope<scope::thread>(); }
TEST(Device, FetchAddManyBlocksWarp) { fadd_scope<scope::warp>(); }
TEST(Device, FetchAddManyBlocksBlock) { fadd_scope<scope::block>(); }

// The other atomics, on this rank's own words at its right neighbour (nobody else touches them).
template <scope S>
__global__ void k_amo_seq(hd::ctx c, long long *w64, int *w32, unsigned long long *bad) {
    const int t = (c.me + 1) % c.n;
    long long *a = w64 + c.me;
    int *b = w32 + c.me;
    unsigned long long wrong = 0;
    hd::atomic_set<S>(c, a, -5ll, t);
    hd::quiet<S>(c);
    wrong += hd::atomic_fetch<S>(c, a, t) != -5;
    wrong += hd::atomic_compare_swap<S>(c, a, 1ll, 9ll, t) != -5;  // no swap
    wrong += hd::atomic_compare_swap<S>(c, a, -5ll, 9ll, t) != -5;
    wrong += hd::atomic_swap<S>(c, a, 11ll, t) != 9;
    wrong += hd::atomic_fetch_inc<S>(c, a, t) != 11;
    hd::atomic_inc<S>(c, a, t);
    hd::atomic_add<S>(c, a, -20ll, t);
    hd::quiet<S>(c);
    wrong += hd::atomic_fetch_add<S>(c, a, 0ll, t) != -7;
    hd::atomic_set<S>(c, b, -3, t);
    hd::quiet<S>(c);
    wrong += hd::atomic_fetch_add<S>(c, b, 10, t) != -3;
    wrong += hd::atomic_compare_swap<S>(c, b, 7, 100, t) != 7;
    wrong += hd::atomic_swap<S>(c, b, -1, t) != 100;
    wrong += hd::atomic_fetch<S>(c, b, t) != -1;
    if (grank<S>() == 0 && wrong) atomicAdd(bad, wrong);
}

template <scope S>
void amo_seq_scope() {
    rank_gpu g;
    g.open(true);
    char *sym;
    HGAS_OK_OR_FAIL(hgas_malloc_kind(16 * n(), HGAS_KIND_CUDA, reinterpret_cast<void **>(&sym)));
    k_amo_seq<S><<<1, threads_of<S>(), 0, g.s>>>(g.c, reinterpret_cast<long long *>(sym),
                                                   reinterpret_cast<int *>(sym + 8 * n()), g.bad);
    CK(cudaGetLastError());
    g.sync();
    EXPECT_EQ(g.take_bad(), 0u) << name_of(S) << " atomics returned wrong old values";
    HGAS_OK_OR_FAIL(hgas_barrier());
    HGAS_OK_OR_FAIL(hgas_free(sym));
}

TEST(Device, AtomicsThread) { amo_seq_scope<scope::thread>(); }
TEST(Device, AtomicsWarp) { amo_seq_scope<scope::warp>(); }
TEST(Device, AtomicsBlock) { amo_seq_scope<scope::block>(); }

// ---- barrier, and many blocks issuing at once -------------------------------------------------

template <scope S>
__global__ void k_barrier(hd::ctx c, uint64_t *slots, int rounds, unsigned long long *bad) {
    for (int k = 1; k <= rounds; ++k) {
        for (int t = 0; t < c.n; ++t) hd::p<S>(c, slots + c.me, static_cast<uint64_t>(k), t);
        hd::barrier<S>(c);
        if (grank<S>() == 0)
            for (int j = 0; j < c.n; ++j)
                if (reinterpret_cast<volatile uint64_t *>(slots)[j] != static_cast<uint64_t>(k)) atomicAdd(bad, 1ull);
        hd::barrier<S>(c);
    }
}

template <scope S>
void barrier_scope() {
    rank_gpu g;
    g.open(true);
    uint64_t *slots;
    HGAS_OK_OR_FAIL(hgas_malloc_kind(8 * n(), HGAS_KIND_CUDA, reinterpret_cast<void **>(&slots)));
    k_barrier<S><<<1, threads_of<S>(), 0, g.s>>>(g.c, slots, 20, g.bad);
    CK(cudaGetLastError());
    g.sync();
    EXPECT_EQ(g.take_bad(), 0u) << name_of(S) << " barrier: a value put before the barrier was missing after it";
    HGAS_OK_OR_FAIL(hgas_barrier());
    HGAS_OK_OR_FAIL(hgas_free(slots));
}

TEST(Device, BarrierThread) { barrier_scope<scope::thread>(); }
TEST(Device, BarrierWarp) { barrier_scope<scope::warp>(); }
TEST(Device, BarrierBlock) { barrier_scope<scope::block>(); }

// 64 blocks x 128 threads at once: every warp puts 256 bytes (nbi), every thread p's a word and
// adds to a counter, all to the right neighbour; one quiet per block.
__global__ void k_many(hd::ctx c, char *bufs, uint64_t *words, unsigned long long *ctr, const char *src) {
    const int right = (c.me + 1) % c.n;
    const unsigned gt = blockIdx.x * blockDim.x + threadIdx.x, warp = gt / 32;
    hd::put_nbi<scope::warp>(c, bufs + warp * 256, src + warp * 256, 256, right);
    hd::p(c, words + gt, (static_cast<uint64_t>(c.me) << 32) | gt, right);
    hd::atomic_add(c, ctr, 1ull, right);
    hd::quiet<scope::block>(c);
}

TEST(Device, ManyBlocksAtOnce) {
    rank_gpu g;
    g.open(true);
    // Through the proxy on a GPU that several ranks share, each request waits for this process's
    // time slice (the agent executing it is a kernel, and the other rank's kernel holds the GPU
    // between slices): about 0.3-0.6 ms a request on an H100 without MPS, so 64 blocks' 16000
    // requests would outlast HGAS_TIMEOUT. 8 blocks still wrap the 64-slot ring many times.
    const char *px = std::getenv("HGAS_DEVICE_PROXY"), *path = std::getenv("HGAS_PATH");
    const bool proxied = (px && !std::strcmp(px, "force")) || (path && !std::strcmp(path, "staged"));
    int gpus = 0;
    CK(cudaGetDeviceCount(&gpus));
    const int blocks = proxied && gpus < n() ? 8 : 64, threads = 128, total = blocks * threads, warps = total / 32;
    char *bufs, *src;
    uint64_t *words;
    unsigned long long *ctr;
    HGAS_OK_OR_FAIL(hgas_malloc_kind(warps * 256, HGAS_KIND_CUDA, reinterpret_cast<void **>(&bufs)));
    HGAS_OK_OR_FAIL(hgas_malloc_kind(total * 8, HGAS_KIND_CUDA, reinterpret_cast<void **>(&words)));
    HGAS_OK_OR_FAIL(hgas_malloc_kind(64, HGAS_KIND_CUDA, reinterpret_cast<void **>(&ctr)));
    zero_sym(ctr, 64);
    CK(cudaMalloc(&src, warps * 256));
    std::vector<unsigned char> p(warps * 256);
    for (size_t i = 0; i < p.size(); ++i) p[i] = pat(me(), 5, i);
    CK(cudaMemcpy(src, p.data(), p.size(), cudaMemcpyHostToDevice));
    CK(cudaStreamSynchronize(nullptr));  // the upload has landed before k_many reads it (as above)
    k_many<<<blocks, threads, 0, g.s>>>(g.c, bufs, words, ctr, src);
    CK(cudaGetLastError());
    g.sync();
    HGAS_OK_OR_FAIL(hgas_barrier());
    const int left = (me() + n() - 1) % n();
    std::vector<unsigned char> hb(warps * 256);
    std::vector<uint64_t> hw(total);
    unsigned long long hc = 0;
    CK(cudaMemcpy(hb.data(), bufs, hb.size(), cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(hw.data(), words, hw.size() * 8, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(&hc, ctr, 8, cudaMemcpyDeviceToHost));
    // Every wrong byte is counted and the warps it belongs to named: which ones failed says more
    // than the first byte does.
    size_t wrong = 0;
    std::set<size_t> bad_warps;
    for (size_t i = 0; i < hb.size(); ++i)
        if (hb[i] != pat(left, 5, i)) {
            ++wrong;
            bad_warps.insert(i / 256);
        }
    std::string names;
    for (size_t w : bad_warps) names += (names.empty() ? "" : " ") + std::to_string(w);
    ASSERT_EQ(wrong, 0u) << "bytes of warps' put_nbi wrong on rank " << me() << "; warps: " << names;
    for (int i = 0; i < total; ++i) ASSERT_EQ(hw[i], (static_cast<uint64_t>(left) << 32) | unsigned(i)) << "word " << i;
    EXPECT_EQ(hc, static_cast<unsigned long long>(total));
    HGAS_OK_OR_FAIL(hgas_barrier());
    CK(cudaFree(src));
    HGAS_OK_OR_FAIL(hgas_free(ctr));
    HGAS_OK_OR_FAIL(hgas_free(words));
    HGAS_OK_OR_FAIL(hgas_free(bufs));
}

// ---- stream-ordered operations ----------------------------------------------------------------

__global__ void k_check(const unsigned char *buf, size_t bytes, int writer, int round, unsigned long long *bad) {
    unsigned long long wrong = 0;
    for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < bytes; i += gridDim.x * blockDim.x)
        wrong += buf[i] != pat(writer, round, i);
    if (wrong) atomicAdd(bad, wrong);
}

__global__ void k_fill(unsigned char *buf, size_t bytes, int writer, int round) {
    for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < bytes; i += gridDim.x * blockDim.x)
        buf[i] = pat(writer, round, i);
}

TEST(Device, StreamOrderedOperations) {
    rank_gpu g;
    g.open(true);
    const size_t bytes = 1u << 20;
    const int rounds = 6;
    unsigned char *bufs, *src;
    uint64_t *sig;
    HGAS_OK_OR_FAIL(hgas_malloc_kind(bytes * (rounds + 1), HGAS_KIND_CUDA, reinterpret_cast<void **>(&bufs)));
    HGAS_OK_OR_FAIL(hgas_malloc_kind(64 * 3, HGAS_KIND_CUDA, reinterpret_cast<void **>(&sig)));
    CK(cudaMalloc(&src, bytes));
    const int right = (me() + 1) % n(), left = (me() + n() - 1) % n();
    // put_on_stream + quiet_on_stream + barrier_on_stream, then a kernel checks what arrived.
    k_fill<<<64, 256, 0, g.s>>>(src, bytes, me(), 0);
    CK(cudaGetLastError());
    HGAS_OK_OR_FAIL(hgas_put_on_stream(bufs, src, bytes, right, g.s));
    HGAS_OK_OR_FAIL(hgas_quiet_on_stream(g.s));
    HGAS_OK_OR_FAIL(hgas_barrier_on_stream(g.s));
    k_check<<<64, 256, 0, g.s>>>(bufs, bytes, left, 0, g.bad);
    CK(cudaGetLastError());
    g.sync();
    EXPECT_EQ(g.take_bad(), 0u) << "hgas_put_on_stream + quiet + barrier on the stream";
    // put_signal_on_stream (SET, ADD) and signal_wait_on_stream (EQ and GE: stream memory
    // operations; GT: a kernel), each round into its own buffer: compute, send, wait, check.
    uint64_t expect[3] = {0, 0, 0};  // what each signal word holds after the round that last updated it
    for (int r = 1; r <= rounds; ++r) {
        const hgas_signal_op_t op = r % 2 ? HGAS_SIGNAL_SET : HGAS_SIGNAL_ADD;
        uint64_t *w = &sig[8 * (r % 3)];
        const uint64_t v = op == HGAS_SIGNAL_SET ? static_cast<uint64_t>(100 + r) : 1;
        k_fill<<<64, 256, 0, g.s>>>(src, bytes, me(), r);
        CK(cudaGetLastError());
        HGAS_OK_OR_FAIL(hgas_put_signal_on_stream(bufs + r * bytes, src, bytes, w, v, op, right, g.s));
        // Word r%3 is SET to 100+r on odd rounds; on even ones 1 is added to what it held.
        expect[r % 3] = op == HGAS_SIGNAL_SET ? v : expect[r % 3] + 1;
        const hgas_cmp_t cmp = r % 3 == 0 ? HGAS_CMP_EQ : r % 3 == 1 ? HGAS_CMP_GE : HGAS_CMP_GT;
        const uint64_t want = cmp == HGAS_CMP_GT ? expect[r % 3] - 1 : expect[r % 3];
        HGAS_OK_OR_FAIL(hgas_signal_wait_on_stream(w, cmp, want, g.s));
        k_check<<<64, 256, 0, g.s>>>(bufs + r * bytes, bytes, left, r, g.bad);
        CK(cudaGetLastError());
        // src is refilled next round: the put must have read it (stream order does that).
    }
    g.sync();
    EXPECT_EQ(g.take_bad(), 0u) << "hgas_put_signal_on_stream / hgas_signal_wait_on_stream";
    HGAS_OK_OR_FAIL(hgas_barrier());
    // Bad input is refused before anything is enqueued.
    EXPECT_EQ(hgas_put_on_stream(src, src, 8, right, g.s), HGAS_ERR_INVALID_POINTER) << "not symmetric";
    EXPECT_EQ(hgas_put_on_stream(bufs, src, 8, n(), g.s), HGAS_ERR_INVALID_ARG) << "no such rank";
    EXPECT_EQ(hgas_signal_wait_on_stream(reinterpret_cast<uint64_t *>(bufs + 4), HGAS_CMP_EQ, 1, g.s),
              HGAS_ERR_MISALIGNED);
    CK(cudaFree(src));
    HGAS_OK_OR_FAIL(hgas_free(sig));
    HGAS_OK_OR_FAIL(hgas_free(bufs));
}

// ---- seed 003's building blocks -------------------------------------------------------------

// Every block adds its part; the last block to finish sends the sum to the right neighbour with
// a signal; every block of the neighbour's kernel waits for it (grid_wait_until); block 0 of
// each then checks. A grid barrier separates two phases, twice.
__global__ void k_modes(hd::ctx c, unsigned long long *partial, unsigned int *count, hd::grid_barrier *gb,
                        unsigned long long *sum_in, uint64_t *sig, unsigned long long *bad) {
    for (int phase = 1; phase <= 2; ++phase) {
        if (threadIdx.x == 0) atomicAdd(partial, static_cast<unsigned long long>(blockIdx.x + 1) * phase);
        if (hd::last_block(count)) {
            // Every block has added: the sum is complete here.
            const unsigned long long want = static_cast<unsigned long long>(gridDim.x) * (gridDim.x + 1) / 2 * phase;
            if (threadIdx.x == 0 && *reinterpret_cast<volatile unsigned long long *>(partial) != want) atomicAdd(bad, 1ull);
            // Its own slot per phase: the neighbour may still be reading the last phase's.
            hd::put_signal<scope::block>(c, sum_in + phase, partial, 8, sig, phase, HGAS_SIGNAL_SET, (c.me + 1) % c.n);
        }
        hd::grid_wait_until(c, sig, HGAS_CMP_GE, static_cast<uint64_t>(phase));
        if (blockIdx.x == 0 && threadIdx.x == 0 &&
            *reinterpret_cast<volatile unsigned long long *>(sum_in + phase) !=
                static_cast<unsigned long long>(gridDim.x) * (gridDim.x + 1) / 2 * phase)
            atomicAdd(bad, 1ull);
        if (!hd::grid_sync(c, gb) && threadIdx.x == 0) atomicAdd(bad, 1ull);
        if (blockIdx.x == 0 && threadIdx.x == 0) *partial = 0;
        if (!hd::grid_sync(c, gb) && threadIdx.x == 0) atomicAdd(bad, 1ull);
    }
}

TEST(Device, LastBlockGridWaitGridSync) {
    rank_gpu g;
    g.open(true);
    const int blocks = 8;
    char *sym;
    HGAS_OK_OR_FAIL(hgas_malloc_kind(256, HGAS_KIND_CUDA, reinterpret_cast<void **>(&sym)));
    zero_sym(sym, 256);
    char *scratch;
    CK(cudaMalloc(&scratch, 256));
    CK(cudaMemset(scratch, 0, 256));
    HGAS_OK_OR_FAIL(hd::check_resident(k_modes, blocks, 128, 0, 1));
    k_modes<<<blocks, 128, 0, g.s>>>(g.c, reinterpret_cast<unsigned long long *>(sym + 64),
                                     reinterpret_cast<unsigned int *>(scratch),
                                     reinterpret_cast<hd::grid_barrier *>(scratch + 64),
                                     reinterpret_cast<unsigned long long *>(sym), reinterpret_cast<uint64_t *>(sym + 128),
                                     g.bad);
    CK(cudaGetLastError());
    g.sync();
    EXPECT_EQ(g.take_bad(), 0u);
    HGAS_OK_OR_FAIL(hgas_barrier());
    CK(cudaFree(scratch));
    HGAS_OK_OR_FAIL(hgas_free(sym));
}

// ---- errors and deadlines ---------------------------------------------------------------------

__global__ void k_bad_rank(hd::ctx c, uint64_t *w) { hd::p(c, w, uint64_t(1), c.n + 3); }
__global__ void k_bad_addr(hd::ctx c, uint64_t *w) { hd::p(c, w, uint64_t(1), 0); }
__global__ void k_wait_forever(hd::ctx c, const uint64_t *w) { (void)hd::signal_wait_until(c, w, HGAS_CMP_EQ, 77); }
__global__ void k_big(int *) {}

TEST(Device, ErrorsAreReportedAndWaitsEnd) {
    rank_gpu g;
    g.open(true);
    uint64_t *w;
    HGAS_OK_OR_FAIL(hgas_malloc_kind(64, HGAS_KIND_CUDA, reinterpret_cast<void **>(&w)));
    k_bad_rank<<<1, 1, 0, g.s>>>(g.c, w);
    CK(cudaGetLastError());
    EXPECT_EQ(hgas_stream_sync(g.s), HGAS_ERR_INVALID_ARG);
    EXPECT_NE(std::string(hgas_last_error()).find("rank"), std::string::npos) << hgas_last_error();
    k_bad_addr<<<1, 1, 0, g.s>>>(g.c, reinterpret_cast<uint64_t *>(g.bad));  // device memory, not symmetric
    CK(cudaGetLastError());
    EXPECT_EQ(hgas_stream_sync(g.s), HGAS_ERR_INVALID_ARG);
    // A signal that never comes: the kernel gives up after the context's deadline (shortened
    // here to 200 ms) and the host hears of it.
    hgas_device_ctx_t quick = g.c;
    quick.timeout_ns = 200ull * 1000 * 1000;
    k_wait_forever<<<1, 1, 0, g.s>>>(quick, w);
    CK(cudaGetLastError());
    EXPECT_EQ(hgas_stream_sync(g.s), HGAS_ERR_TIMEOUT);
    EXPECT_NE(std::string(hgas_last_error()).find("HGAS_TIMEOUT"), std::string::npos) << hgas_last_error();
    EXPECT_EQ(hgas_device_status(), HGAS_OK) << "reported once";
    // The residency guard.
    EXPECT_EQ(hd::check_resident(k_big, 1 << 24, 1024), HGAS_ERR_INVALID_ARG);
    EXPECT_EQ(hd::check_resident(k_big, 1, 32), HGAS_OK) << hgas_last_error();
    HGAS_OK_OR_FAIL(hgas_barrier());
    HGAS_OK_OR_FAIL(hgas_free(w));
}

}  // namespace
