// Collectives in stream order on GPU memory (ctest label gpu; tools/gpu-check.sh runs it):
// hgas_*_on_stream start when the stream reaches them -- a kernel enqueued before fills the
// source, one enqueued after checks the result and then overwrites the source, which a
// collective that ran early or late would see -- for allreduce (float, half, bfloat16, int8),
// reduce, broadcast, fcollect, alltoall, reduce_scatter and the team barrier, on the world and
// on an odd team; small allreduces as one kernel on the stream; rank threads' collectives as one
// kernel for all members; bad arguments fail at the call with nothing enqueued.
#include <hgas/hgas.h>
#include <hgas/hgas_device.h>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "coll/testing_coll.h"
#include "gpu_test.hpp"

namespace {

using namespace gpu_test;

#ifdef HGAS_RANK_THREADS
constexpr bool rank_threads = true;
#else
constexpr bool rank_threads = false;
#endif

// Rank r's element i: a small integer, exact in every float type and in int8 sums of 8 ranks.
__host__ __device__ int val(int r, size_t i) { return static_cast<int>((r * 5 + i * 3 + (i >> 7)) % 7) - 3; }

template <class T>
__device__ T from_int(int v) {
    if constexpr (std::is_same_v<T, __half>) return __int2half_rn(v);
    else if constexpr (std::is_same_v<T, __nv_bfloat16>) return __int2bfloat16_rn(v);
    else return static_cast<T>(v);
}
template <class T>
__device__ float to_float(T v) {
    if constexpr (std::is_same_v<T, __half>) return __half2float(v);
    else if constexpr (std::is_same_v<T, __nv_bfloat16>) return __bfloat162float(v);
    else return static_cast<float>(v);
}

template <class T>
__global__ void k_fill(T *p, size_t count, int r) {
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < count; i += size_t(gridDim.x) * blockDim.x)
        p[i] = from_int<T>(val(r, i));
}
// Sum over the members first .. first + members - 1.
template <class T>
__global__ void k_check_sum(const T *p, size_t count, int first, int members, unsigned long long *bad) {
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < count; i += size_t(gridDim.x) * blockDim.x) {
        int want = 0;
        for (int r = first; r < first + members; ++r) want += val(r, i);
        if (to_float(p[i]) != static_cast<float>(want)) atomicAdd(bad, 1ull);
    }
}
__global__ void k_bytes(unsigned char *p, size_t n, int salt) {
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
        p[i] = static_cast<unsigned char>((i * 7 + salt * 131 + (i >> 9)) & 0xff);
}
__global__ void k_check_bytes(const unsigned char *p, size_t n, int salt, unsigned long long *bad) {
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
        if (p[i] != static_cast<unsigned char>((i * 7 + salt * 131 + (i >> 9)) & 0xff)) atomicAdd(bad, 1ull);
}

template <class T>
void allreduce_on_stream(rank_gpu &f, hgas_team_t team, int first, int members, hgas_dtype_t type, size_t count,
                         void *src, void *dst) {
    T *sp = static_cast<T *>(src), *dp = static_cast<T *>(dst);
    k_fill<T><<<64, 256, 0, f.s>>>(sp, count, me());
    HGAS_OK_OR_FAIL(hgas_team_allreduce_on_stream(team, dp, sp, count, type, HGAS_OP_SUM, f.s));
    k_check_sum<T><<<64, 256, 0, f.s>>>(dp, count, first, members, f.bad);
    k_fill<T><<<64, 256, 0, f.s>>>(sp, count, me() + 100);  // after the collective has read it
    HGAS_OK_OR_FAIL(hgas_stream_sync(f.s));
    EXPECT_EQ(f.take_bad(), 0u) << "type " << type << " count " << count << " on a team of " << members;
}

TEST(CollStream, AllreduceEveryFloatTypeInStreamOrder) {
    rank_gpu f;
    f.open();
    const size_t count = (1 << 20) + 333;  // chunks of the scratch, pipelined
    void *src, *dst;
    HGAS_OK_OR_FAIL(hgas_malloc_kind(count * 4, HGAS_KIND_CUDA, &src));
    HGAS_OK_OR_FAIL(hgas_malloc_kind(count * 4, HGAS_KIND_CUDA, &dst));
    hgas_team_t odd = HGAS_TEAM_INVALID;
    if (n() >= 3) HGAS_OK_OR_FAIL(hgas_team_split_strided(HGAS_TEAM_WORLD, 1, 1, n() - 1, &odd));
    for (size_t c : {size_t{1}, size_t{4097}, count}) {
        allreduce_on_stream<float>(f, HGAS_TEAM_WORLD, 0, n(), HGAS_FLOAT, c, src, dst);
        allreduce_on_stream<__half>(f, HGAS_TEAM_WORLD, 0, n(), HGAS_FLOAT16, c, src, dst);
        allreduce_on_stream<__nv_bfloat16>(f, HGAS_TEAM_WORLD, 0, n(), HGAS_BFLOAT16, c, src, dst);
        allreduce_on_stream<int8_t>(f, HGAS_TEAM_WORLD, 0, n(), HGAS_INT8, c, src, dst);
        if (odd != HGAS_TEAM_INVALID) allreduce_on_stream<__half>(f, odd, 1, n() - 1, HGAS_FLOAT16, c, src, dst);
    }
    // Several collectives enqueued back to back before one sync: they run in order.
    for (int k = 0; k < 5; ++k) {
        k_fill<float><<<64, 256, 0, f.s>>>(static_cast<float *>(src), 1000, me());
        HGAS_OK_OR_FAIL(hgas_allreduce_on_stream(dst, src, 1000, HGAS_FLOAT, HGAS_OP_SUM, f.s));
        k_check_sum<float><<<64, 256, 0, f.s>>>(static_cast<float *>(dst), 1000, 0, n(), f.bad);
        HGAS_OK_OR_FAIL(hgas_team_barrier_on_stream(HGAS_TEAM_WORLD, f.s));
    }
    HGAS_OK_OR_FAIL(hgas_stream_sync(f.s));
    EXPECT_EQ(f.take_bad(), 0u) << "back-to-back stream collectives";
    if (odd != HGAS_TEAM_INVALID) HGAS_OK_OR_FAIL(hgas_team_destroy(odd));
    HGAS_OK_OR_FAIL(hgas_free(src));
    HGAS_OK_OR_FAIL(hgas_free(dst));
}

TEST(CollStream, DataMovementInStreamOrder) {
    rank_gpu f;
    f.open();
    const size_t bytes = 200003;
    unsigned char *src, *dst;
    HGAS_OK_OR_FAIL(hgas_malloc_kind(bytes * n(), HGAS_KIND_CUDA, (void **)&src));
    HGAS_OK_OR_FAIL(hgas_malloc_kind(bytes * n(), HGAS_KIND_CUDA, (void **)&dst));
    for (int root : {0, n() - 1}) {
        k_bytes<<<64, 256, 0, f.s>>>(src, bytes, 10 + me());
        HGAS_OK_OR_FAIL(hgas_broadcast_on_stream(dst, src, bytes, root, f.s));
        k_check_bytes<<<64, 256, 0, f.s>>>(dst, bytes, 10 + root, f.bad);
        HGAS_OK_OR_FAIL(hgas_stream_sync(f.s));
        EXPECT_EQ(f.take_bad(), 0u) << "broadcast from " << root;
    }
    k_bytes<<<64, 256, 0, f.s>>>(src, bytes, 20 + me());
    HGAS_OK_OR_FAIL(hgas_team_fcollect_on_stream(HGAS_TEAM_WORLD, dst, src, bytes, f.s));
    for (int r = 0; r < n(); ++r) k_check_bytes<<<64, 256, 0, f.s>>>(dst + r * bytes, bytes, 20 + r, f.bad);
    HGAS_OK_OR_FAIL(hgas_stream_sync(f.s));
    EXPECT_EQ(f.take_bad(), 0u) << "fcollect";
    for (int j = 0; j < n(); ++j) k_bytes<<<64, 256, 0, f.s>>>(src + j * bytes, bytes, 30 + me() * 8 + j);
    HGAS_OK_OR_FAIL(hgas_team_alltoall_on_stream(HGAS_TEAM_WORLD, dst, src, bytes, f.s));
    for (int r = 0; r < n(); ++r) k_check_bytes<<<64, 256, 0, f.s>>>(dst + r * bytes, bytes, 30 + r * 8 + me(), f.bad);
    HGAS_OK_OR_FAIL(hgas_stream_sync(f.s));
    EXPECT_EQ(f.take_bad(), 0u) << "alltoall";
    // reduce_scatter (float SUM): member me gets elements [me * count, (me + 1) * count).
    const size_t count = 5000;
    float *fs = reinterpret_cast<float *>(src), *fd = reinterpret_cast<float *>(dst);
    k_fill<float><<<64, 256, 0, f.s>>>(fs, count * n(), me());
    HGAS_OK_OR_FAIL(hgas_team_reduce_scatter_on_stream(HGAS_TEAM_WORLD, fd, fs, count, HGAS_FLOAT, HGAS_OP_SUM, f.s));
    HGAS_OK_OR_FAIL(hgas_stream_sync(f.s));
    std::vector<float> got(count);
    CK(cudaMemcpy(got.data(), fd, count * 4, cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < count; ++i) {
        int want = 0;
        for (int r = 0; r < n(); ++r) want += val(r, me() * count + i);
        ASSERT_EQ(got[i], static_cast<float>(want)) << "reduce_scatter element " << i;
    }
    // reduce to the last rank (half SUM).
    k_fill<__half><<<64, 256, 0, f.s>>>(reinterpret_cast<__half *>(src), count, me());
    HGAS_OK_OR_FAIL(hgas_team_reduce_on_stream(HGAS_TEAM_WORLD, dst, src, count, HGAS_FLOAT16, HGAS_OP_SUM, n() - 1, f.s));
    if (me() == n() - 1) k_check_sum<__half><<<64, 256, 0, f.s>>>(reinterpret_cast<__half *>(dst), count, 0, n(), f.bad);
    HGAS_OK_OR_FAIL(hgas_stream_sync(f.s));
    EXPECT_EQ(f.take_bad(), 0u) << "reduce";
    HGAS_OK_OR_FAIL(hgas_free(src));
    HGAS_OK_OR_FAIL(hgas_free(dst));
}

// Small device vectors: the stream-ordered allreduce is one kernel on the stream where the GPUs
// do not time-slice between processes (HGAS_TEST_EXPECT_KERNEL=1: every call; 0: none; any: the
// results only). Sources symmetric and apart, in place and in a private cudaMalloc buffer (copied
// on the stream), one block and several, twenty calls back to back before one sync, a blocking
// allreduce between them, calls on two streams without a sync between, the default stream,
// and counts that differ between members: every result checked on the stream.
TEST(CollStream, SmallAllreduceIsOneKernelOnTheStream) {
    rank_gpu f;
    f.open();
    const char *e = std::getenv("HGAS_TEST_EXPECT_KERNEL");
    const std::string expect = e && *e ? e : "any";
    const size_t cap = 262144;  // floats: 1 MiB, the largest vector of the kernel
    // Past 64 KiB (16384 floats) only members on GPUs of their own take the kernel.
    int sharing = hgas_team_n(HGAS_TEAM_GPU), most = 0;
    HGAS_OK_OR_FAIL(hgas_allreduce(&most, &sharing, 1, HGAS_INT32, HGAS_OP_MAX));
    float *src, *dst, *src2, *dst2, *priv;
    HGAS_OK_OR_FAIL(hgas_malloc_kind(cap * 4, HGAS_KIND_CUDA, reinterpret_cast<void **>(&src)));
    HGAS_OK_OR_FAIL(hgas_malloc_kind(cap * 4, HGAS_KIND_CUDA, reinterpret_cast<void **>(&dst)));
    HGAS_OK_OR_FAIL(hgas_malloc_kind(cap * 4, HGAS_KIND_CUDA, reinterpret_cast<void **>(&src2)));
    HGAS_OK_OR_FAIL(hgas_malloc_kind(cap * 4, HGAS_KIND_CUDA, reinterpret_cast<void **>(&dst2)));
    CK(cudaMalloc(&priv, cap * 4));
    cudaStream_t s2;
    CK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
    HGAS_OK_OR_FAIL(hgasi_coll_stats_reset());
    uint64_t calls = 0, uncounted = 0;
    for (size_t c : {size_t{1}, size_t{4097}, size_t{16384}, size_t{16388}, cap}) {
        SCOPED_TRACE(std::to_string(c) + " floats");
        uint64_t &count = c <= 16384 || most == 1 ? calls : uncounted;
        for (int k = 0; k < 20; ++k) {
            float *from = k % 3 == 0 ? src : k % 3 == 1 ? dst : priv;
            k_fill<float><<<64, 256, 0, f.s>>>(from, c, me() + k);
            HGAS_OK_OR_FAIL(hgas_allreduce_on_stream(dst, from, c, HGAS_FLOAT, HGAS_OP_SUM, f.s));
            // Sum over members of val(r + k, i): members k .. k + n - 1 of val's numbering.
            k_check_sum<float><<<64, 256, 0, f.s>>>(dst, c, k, n(), f.bad);
            ++count;
        }
        // A blocking call between stream-ordered ones (its kernels have words of their own and
        // wait for no stream).
        k_fill<float><<<64, 256, 0, f.s>>>(src, c, me());
        HGAS_OK_OR_FAIL(hgas_stream_sync(f.s));  // (not cudaStreamSynchronize: a queued call needs this thread)
        HGAS_OK_OR_FAIL(hgas_allreduce(dst, src, c, HGAS_FLOAT, HGAS_OP_SUM));
        k_check_sum<float><<<64, 256, 0, f.s>>>(dst, c, 0, n(), f.bad);
        // One on a second stream while the first may still run one: the team's kernels run in
        // call order on each GPU whatever their streams.
        k_fill<float><<<64, 256, 0, f.s>>>(src, c, me() + 3);
        HGAS_OK_OR_FAIL(hgas_allreduce_on_stream(dst, src, c, HGAS_FLOAT, HGAS_OP_SUM, f.s));
        k_check_sum<float><<<64, 256, 0, f.s>>>(dst, c, 3, n(), f.bad);
        k_fill<float><<<64, 256, 0, s2>>>(src2, c, me() + 7);
        HGAS_OK_OR_FAIL(hgas_allreduce_on_stream(dst2, src2, c, HGAS_FLOAT, HGAS_OP_SUM, s2));
        k_check_sum<float><<<64, 256, 0, s2>>>(dst2, c, 7, n(), f.bad);
        HGAS_OK_OR_FAIL(hgas_stream_sync(s2));
        HGAS_OK_OR_FAIL(hgas_stream_sync(f.s));
        // The default stream: the legacy one (NULL) for rank processes; ranks as threads share
        // it, so there each takes its thread's own (two members' kernels on one stream would
        // wait for each other).
        cudaStream_t dflt = rank_threads ? cudaStreamPerThread : static_cast<cudaStream_t>(nullptr);
        k_fill<float><<<64, 256, 0, dflt>>>(src, c, me() + 11);
        HGAS_OK_OR_FAIL(hgas_allreduce_on_stream(dst, src, c, HGAS_FLOAT, HGAS_OP_SUM, dflt));
        k_check_sum<float><<<64, 256, 0, dflt>>>(dst, c, 11, n(), f.bad);
        HGAS_OK_OR_FAIL(hgas_stream_sync(dflt));
        count += 4;
        EXPECT_EQ(f.take_bad(), 0u) << c << " floats";
    }
    // Counts that differ between members, on a team of its own: every member's call fails at
    // its hgas_stream_sync with a message (the kernel compares fingerprints; the queued path's
    // host does), and the team is destroyed after it (its flags cleared once its last kernel is done).
    if (n() > 1) {
        hgas_team_t t = HGAS_TEAM_INVALID;
        HGAS_OK_OR_FAIL(hgas_team_split_strided(HGAS_TEAM_WORLD, 0, 1, n(), &t));
        HGAS_OK_OR_FAIL(hgas_team_allreduce_on_stream(t, dst, src, me() == 0 ? 10 : 11, HGAS_INT32, HGAS_OP_SUM, f.s));
        EXPECT_EQ(hgas_stream_sync(f.s), HGAS_ERR_INVALID_ARG);
        EXPECT_NE(std::string(hgas_last_error()).find("other arguments"), std::string::npos) << hgas_last_error();
        // Processes: a kernel each, which finds the difference. Rank threads meet first, find
        // it there, and run nothing (not counted).
        if (!rank_threads) ++calls;
        HGAS_OK_OR_FAIL(hgas_team_destroy(t));
        k_fill<float><<<64, 256, 0, f.s>>>(src, 100, me());
        HGAS_OK_OR_FAIL(hgas_allreduce_on_stream(dst, src, 100, HGAS_FLOAT, HGAS_OP_SUM, f.s));
        k_check_sum<float><<<64, 256, 0, f.s>>>(dst, 100, 0, n(), f.bad);
        HGAS_OK_OR_FAIL(hgas_stream_sync(f.s));
        EXPECT_EQ(f.take_bad(), 0u) << "after a failed call on another team";
        ++calls;
    }
    hgasi_coll_stats_t st{};
    HGAS_OK_OR_FAIL(hgasi_coll_stats(&st));
    if (expect == "1" && n() > 1) EXPECT_EQ(st.allreduce_kernel, calls);
    if (expect == "0" || n() == 1) EXPECT_EQ(st.allreduce_kernel, 0u);
    CK(cudaStreamDestroy(s2));
    CK(cudaFree(priv));
    HGAS_OK_OR_FAIL(hgas_free(src));
    HGAS_OK_OR_FAIL(hgas_free(dst));
    HGAS_OK_OR_FAIL(hgas_free(src2));
    HGAS_OK_OR_FAIL(hgas_free(dst2));
}

// The same for broadcast and fcollect of up to 64 KiB of dst: every root, sources symmetric and
// apart, in place, in a private cudaMalloc buffer (copied on the stream) and, off the root, NULL;
// sizes aligned and not; all back to back on one stream before one sync.
TEST(CollStream, SmallBroadcastAndFcollectAreOneKernelOnTheStream) {
    rank_gpu f;
    f.open();
    const char *e = std::getenv("HGAS_TEST_EXPECT_KERNEL");
    const std::string expect = e && *e ? e : "any";
    const size_t small = size_t{64} << 10, cap = size_t{1} << 20;  // dst: where members share a GPU, and not
    int sharing = hgas_team_n(HGAS_TEAM_GPU), most = 0;
    HGAS_OK_OR_FAIL(hgas_allreduce(&most, &sharing, 1, HGAS_INT32, HGAS_OP_MAX));
    unsigned char *src, *dst, *priv;
    HGAS_OK_OR_FAIL(hgas_malloc_kind(cap, HGAS_KIND_CUDA, reinterpret_cast<void **>(&src)));
    HGAS_OK_OR_FAIL(hgas_malloc_kind(cap, HGAS_KIND_CUDA, reinterpret_cast<void **>(&dst)));
    CK(cudaMalloc(&priv, cap));
    HGAS_OK_OR_FAIL(hgasi_coll_stats_reset());
    uint64_t bcasts = 0, fcollects = 0;
    int salt = 0;
    const size_t nn = static_cast<size_t>(n());
    for (size_t bytes : {size_t{1}, size_t{100}, size_t{4096}, small / nn, small / nn + 16, cap / nn - 5}) {
        // past 64 KiB of dst, only members on GPUs of their own take the kernel (not counted else)
        const bool big_bcast = bytes > small, big_fcollect = bytes * nn > small;
        uint64_t ignored = 0;
        uint64_t &bc = big_bcast && most > 1 ? ignored : bcasts, &fc = big_fcollect && most > 1 ? ignored : fcollects;
        for (int root = 0; root < n(); ++root) {
            for (int mode = 0; mode < 4; ++mode) {
                ++salt;
                unsigned char *from = mode == 0 ? src : mode == 1 ? dst : priv;
                if (me() == root) k_bytes<<<64, 256, 0, f.s>>>(from, bytes, salt);
                const void *arg = mode == 3 && me() != root ? nullptr : (mode == 3 ? src : from);
                if (mode == 3 && me() == root) k_bytes<<<64, 256, 0, f.s>>>(src, bytes, salt);
                HGAS_OK_OR_FAIL(hgas_broadcast_on_stream(dst, arg, bytes, root, f.s));
                k_check_bytes<<<64, 256, 0, f.s>>>(dst, bytes, salt, f.bad);
                ++bc;
            }
        }
        for (int mode = 0; mode < 3; ++mode) {
            ++salt;
            unsigned char *mine = dst + bytes * static_cast<size_t>(me());
            unsigned char *from = mode == 0 ? src : mode == 1 ? mine : priv;
            k_bytes<<<64, 256, 0, f.s>>>(from, bytes, salt * 16 + me());
            HGAS_OK_OR_FAIL(hgas_team_fcollect_on_stream(HGAS_TEAM_WORLD, dst, from, bytes, f.s));
            for (int q = 0; q < n(); ++q)
                k_check_bytes<<<64, 256, 0, f.s>>>(dst + bytes * static_cast<size_t>(q), bytes, salt * 16 + q, f.bad);
            ++fc;
        }
        HGAS_OK_OR_FAIL(hgas_stream_sync(f.s));
        EXPECT_EQ(f.take_bad(), 0u) << bytes << " bytes";
    }
    hgasi_coll_stats_t st{};
    HGAS_OK_OR_FAIL(hgasi_coll_stats(&st));
    if (expect == "1" && n() > 1) {
        EXPECT_EQ(st.bcast_kernel, bcasts);
        EXPECT_EQ(st.fcollect_kernel, fcollects);
    }
    if (expect == "0" || n() == 1) EXPECT_EQ(st.bcast_kernel + st.fcollect_kernel, 0u);
    CK(cudaFree(priv));
    HGAS_OK_OR_FAIL(hgas_free(src));
    HGAS_OK_OR_FAIL(hgas_free(dst));
}

// The same for alltoall, whose src is n blocks: blocks of 1 byte to 64 KiB / n (aligned and
// not), src symmetric and apart from dst or private (cudaMalloc: copied into dst first on the
// stream), every call back to back on one stream before one sync; src overlapping dst is
// refused at the call, nothing enqueued.
TEST(CollStream, SmallAlltoallIsOneKernelOnTheStream) {
    rank_gpu f;
    f.open();
    const char *e = std::getenv("HGAS_TEST_EXPECT_KERNEL");
    const std::string expect = e && *e ? e : "any";
    const size_t cap = size_t{64} << 10;
    unsigned char *src, *dst, *priv;
    HGAS_OK_OR_FAIL(hgas_malloc_kind(cap, HGAS_KIND_CUDA, reinterpret_cast<void **>(&src)));
    HGAS_OK_OR_FAIL(hgas_malloc_kind(cap, HGAS_KIND_CUDA, reinterpret_cast<void **>(&dst)));
    CK(cudaMalloc(&priv, cap));
    HGAS_OK_OR_FAIL(hgasi_coll_stats_reset());
    uint64_t calls = 0;
    int salt = 0;
    for (size_t b : {size_t{1}, size_t{15}, size_t{16}, size_t{1000}, size_t{4096}, cap / n()}) {
        for (int mode = 0; mode < 2; ++mode) {
            ++salt;
            unsigned char *from = mode == 0 ? src : priv;
            for (int j = 0; j < n(); ++j) k_bytes<<<64, 256, 0, f.s>>>(from + j * b, b, salt * 64 + me() * 8 + j);
            HGAS_OK_OR_FAIL(hgas_team_alltoall_on_stream(HGAS_TEAM_WORLD, dst, from, b, f.s));
            for (int r = 0; r < n(); ++r)
                k_check_bytes<<<64, 256, 0, f.s>>>(dst + r * b, b, salt * 64 + r * 8 + me(), f.bad);
            ++calls;
        }
    }
    // A private src of 8 kernel blocks (64 KiB in all), 20 times, while another stream keeps the GPU
    // busy, so that the kernel's blocks start at different times: each block may wait only for
    // the peers' same block, and the staged vector must outlive every peer's other blocks.
    cudaStream_t busy;
    CK(cudaStreamCreateWithFlags(&busy, cudaStreamNonBlocking));
    unsigned char *filler;
    CK(cudaMalloc(&filler, size_t{64} << 20));
    for (int round = 0; round < 20; ++round) {
        const size_t b = cap / n();
        k_bytes<<<1024, 256, 0, busy>>>(filler, size_t{64} << 20, round);
        for (int j = 0; j < n(); ++j) k_bytes<<<64, 256, 0, f.s>>>(priv + j * b, b, 100 + round * 64 + me() * 8 + j);
        HGAS_OK_OR_FAIL(hgas_team_alltoall_on_stream(HGAS_TEAM_WORLD, dst, priv, b, f.s));
        k_bytes<<<64, 256, 0, f.s>>>(priv, cap, 7);  // the next round's src: after this call read it
        for (int r = 0; r < n(); ++r)
            k_check_bytes<<<64, 256, 0, f.s>>>(dst + r * b, b, 100 + round * 64 + r * 8 + me(), f.bad);
        ++calls;
    }
    HGAS_OK_OR_FAIL(hgas_stream_sync(f.s));
    CK(cudaStreamSynchronize(busy));
    CK(cudaStreamDestroy(busy));
    CK(cudaFree(filler));
    EXPECT_EQ(f.take_bad(), 0u);
    hgasi_coll_stats_t st{};
    HGAS_OK_OR_FAIL(hgasi_coll_stats(&st));
    if (expect == "1" && n() > 1) EXPECT_EQ(st.alltoall_kernel, calls);
    if (expect == "0" || n() == 1) EXPECT_EQ(st.alltoall_kernel, 0u);
    // In place: refused at the call (on every member alike, so nobody waits for a kernel).
    EXPECT_EQ(hgas_team_alltoall_on_stream(HGAS_TEAM_WORLD, dst, dst + 1, 16, f.s), HGAS_ERR_INVALID_ARG);
    EXPECT_NE(std::string(hgas_last_error()).find("overlap"), std::string::npos) << hgas_last_error();
    HGAS_OK_OR_FAIL(hgas_stream_sync(f.s));
    CK(cudaFree(priv));
    HGAS_OK_OR_FAIL(hgas_free(src));
    HGAS_OK_OR_FAIL(hgas_free(dst));
}

// Block `me` of every member's vector combined: element i is the sum (or, `max`, the largest)
// of val(r, me * count + i) over the members r.
template <class T>
__global__ void k_check_block_sum(const T *p, size_t count, int me, int members, unsigned long long *bad,
                                  bool max = false) {
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < count; i += size_t(gridDim.x) * blockDim.x) {
        int want = max ? val(0, static_cast<size_t>(me) * count + i) : 0;
        for (int r = max ? 1 : 0; r < members; ++r) {
            const int v = val(r, static_cast<size_t>(me) * count + i);
            want = max ? (v > want ? v : want) : want + v;
        }
        if (to_float(p[i]) != static_cast<float>(want)) atomicAdd(bad, 1ull);
    }
}

template <class T>
void reduce_scatter_modes(rank_gpu &f, hgas_dtype_t type, size_t count, unsigned char *src, unsigned char *dst,
                          unsigned char *priv, uint64_t &calls, hgas_op_t op = HGAS_OP_SUM) {
    // src symmetric and apart from dst; private (copied to the team's staging block); in place
    // (dst is this member's block of a symmetric src: it overlaps, so staged too)
    for (int mode = 0; mode < 3; ++mode) {
        T *from = reinterpret_cast<T *>(mode == 0 ? src : mode == 1 ? priv : dst);
        T *to = mode == 2 ? from + count * static_cast<size_t>(me()) : reinterpret_cast<T *>(dst);
        k_fill<T><<<64, 256, 0, f.s>>>(from, count * n(), me());
        HGAS_OK_OR_FAIL(hgas_team_reduce_scatter_on_stream(HGAS_TEAM_WORLD, to, from, count, type, op, f.s));
        k_check_block_sum<T><<<64, 256, 0, f.s>>>(to, count, me(), n(), f.bad, op == HGAS_OP_MAX);
        k_fill<T><<<64, 256, 0, f.s>>>(reinterpret_cast<T *>(priv), count * n(), me() + 50);  // after it read priv
        ++calls;
    }
}

// The same for reduce_scatter, whose src is n blocks and dst one: float, int32 (sum and max) and half (blocks
// of 2-byte elements that are not whole 16-byte words), 1 element to 64 KiB of src in all, src
// symmetric, private and in place, every call back to back on one stream before one sync.
TEST(CollStream, SmallReduceScatterIsOneKernelOnTheStream) {
    rank_gpu f;
    f.open();
    const char *e = std::getenv("HGAS_TEST_EXPECT_KERNEL");
    const std::string expect = e && *e ? e : "any";
    const size_t cap = size_t{64} << 10;
    unsigned char *src, *dst, *priv;
    HGAS_OK_OR_FAIL(hgas_malloc_kind(cap, HGAS_KIND_CUDA, reinterpret_cast<void **>(&src)));
    HGAS_OK_OR_FAIL(hgas_malloc_kind(cap, HGAS_KIND_CUDA, reinterpret_cast<void **>(&dst)));
    CK(cudaMalloc(&priv, cap));
    HGAS_OK_OR_FAIL(hgasi_coll_stats_reset());
    uint64_t calls = 0;
    for (size_t c : {size_t{1}, size_t{3}, size_t{8}, size_t{1000}, cap / 4 / n()}) {
        reduce_scatter_modes<float>(f, HGAS_FLOAT, c, src, dst, priv, calls);
        reduce_scatter_modes<int32_t>(f, HGAS_INT32, c, src, dst, priv, calls);
        reduce_scatter_modes<int32_t>(f, HGAS_INT32, c, src, dst, priv, calls, HGAS_OP_MAX);
        reduce_scatter_modes<__half>(f, HGAS_FLOAT16, c * 2 - 1, src, dst, priv, calls);
    }
    HGAS_OK_OR_FAIL(hgas_stream_sync(f.s));
    EXPECT_EQ(f.take_bad(), 0u);
    hgasi_coll_stats_t st{};
    HGAS_OK_OR_FAIL(hgasi_coll_stats(&st));
    if (expect == "1" && n() > 1) EXPECT_EQ(st.reduce_scatter_kernel, calls);
    if (expect == "0" || n() == 1) EXPECT_EQ(st.reduce_scatter_kernel, 0u);
    CK(cudaFree(priv));
    HGAS_OK_OR_FAIL(hgas_free(src));
    HGAS_OK_OR_FAIL(hgas_free(dst));
}

// Rank threads: every stream-ordered collective of device vectors is one kernel for all members
// after they meet on the host (docs/threads.md), whatever the size and also for private
// cudaMalloc buffers (reductions) and the in-place forms each collective allows; a host vector takes the
// queue as before. HGAS_TEST_EXPECT_GROUP=1: the members share one GPU, every device call is
// counted (group_kernel); rank processes never meet.
TEST(CollStream, RankThreadsRunEveryCollectiveAsOneKernel) {
    rank_gpu f;
    f.open();
    const char *e = std::getenv("HGAS_TEST_EXPECT_GROUP");
    // The one kernel needs the members on one GPU: rank threads of a process on a machine of
    // several GPUs take one each (local rank modulo the count) and run a kernel per member.
    const bool one_gpu = hgas_team_n(HGAS_TEAM_GPU) == n();
    const bool expect_group = e && std::string(e) == "1" && one_gpu;
    const size_t big = (size_t{1} << 20) + 333;  // floats: past the per-member kernel's 64 KiB
    float *priv;  // the reductions take any memory
    CK(cudaMalloc(&priv, big * 4 * n()));
    unsigned char *bytes_buf;  // broadcast, fcollect and alltoall a symmetric dst
    HGAS_OK_OR_FAIL(hgas_malloc_kind(2 * (big * 4 + 3) * n(), HGAS_KIND_CUDA, reinterpret_cast<void **>(&bytes_buf)));
    HGAS_OK_OR_FAIL(hgasi_coll_stats_reset());
    uint64_t calls = 0;
    for (size_t c : {size_t{1000}, big}) {
        SCOPED_TRACE(std::to_string(c) + " floats");
        // allreduce in place in a private buffer
        k_fill<float><<<64, 256, 0, f.s>>>(priv, c, me() + 1);
        HGAS_OK_OR_FAIL(hgas_allreduce_on_stream(priv, priv, c, HGAS_FLOAT, HGAS_OP_SUM, f.s));
        k_check_sum<float><<<64, 256, 0, f.s>>>(priv, c, 1, n(), f.bad);
        // reduce to the root in place
        k_fill<float><<<64, 256, 0, f.s>>>(priv, c, me() + 2);
        HGAS_OK_OR_FAIL(hgas_team_reduce_on_stream(HGAS_TEAM_WORLD, priv, priv, c, HGAS_FLOAT, HGAS_OP_SUM, 0, f.s));
        if (me() == 0) k_check_sum<float><<<64, 256, 0, f.s>>>(priv, c, 2, n(), f.bad);
        // reduce_scatter with dst at this member's block of src
        k_fill<float><<<64, 256, 0, f.s>>>(priv, c * n(), me() + 3);
        HGAS_OK_OR_FAIL(hgas_team_reduce_scatter_on_stream(HGAS_TEAM_WORLD, priv + c * me(), priv, c, HGAS_FLOAT,
                                                           HGAS_OP_SUM, f.s));
        HGAS_OK_OR_FAIL(hgas_team_barrier_on_stream(HGAS_TEAM_WORLD, f.s));
        HGAS_OK_OR_FAIL(hgas_stream_sync(f.s));
        EXPECT_EQ(f.take_bad(), 0u);
        std::vector<float> got(c);
        CK(cudaMemcpy(got.data(), priv + c * me(), c * 4, cudaMemcpyDeviceToHost));
        for (size_t i = 0; i < c; i += 997) {
            int want = 0;
            for (int r = 0; r < n(); ++r) want += val(r + 3, me() * c + i);
            ASSERT_EQ(got[i], static_cast<float>(want)) << "reduce_scatter element " << i;
        }
        // alltoall (from the upper half: never in place), fcollect in place, broadcast from the last member
        const size_t b = c * 4 + 3;  // bytes: no word divides them
        unsigned char *upper = bytes_buf + b * n();
        for (int j = 0; j < n(); ++j) k_bytes<<<64, 256, 0, f.s>>>(upper + j * b, b, 40 + me() * 8 + j);
        HGAS_OK_OR_FAIL(hgas_team_alltoall_on_stream(HGAS_TEAM_WORLD, bytes_buf, upper, b, f.s));
        for (int r = 0; r < n(); ++r) k_check_bytes<<<64, 256, 0, f.s>>>(bytes_buf + r * b, b, 40 + r * 8 + me(), f.bad);
        k_bytes<<<64, 256, 0, f.s>>>(bytes_buf + me() * b, b, 50 + me());
        HGAS_OK_OR_FAIL(hgas_team_fcollect_on_stream(HGAS_TEAM_WORLD, bytes_buf, bytes_buf + me() * b, b, f.s));
        for (int r = 0; r < n(); ++r) k_check_bytes<<<64, 256, 0, f.s>>>(bytes_buf + r * b, b, 50 + r, f.bad);
        k_bytes<<<64, 256, 0, f.s>>>(bytes_buf, c * 4, 60 + me());
        HGAS_OK_OR_FAIL(hgas_broadcast_on_stream(bytes_buf, me() == n() - 1 ? bytes_buf : nullptr, c * 4, n() - 1, f.s));
        k_check_bytes<<<64, 256, 0, f.s>>>(bytes_buf, c * 4, 60 + n() - 1, f.bad);
        HGAS_OK_OR_FAIL(hgas_stream_sync(f.s));
        EXPECT_EQ(f.take_bad(), 0u);
        calls += 7;
        // The device barrier in stream order: rank threads meet like the team barrier (its
        // kernel would wait inside the GPU for the other members').
        if (rank_threads) {
            HGAS_OK_OR_FAIL(hgas_barrier_on_stream(f.s));
            HGAS_OK_OR_FAIL(hgas_stream_sync(f.s));
            ++calls;
        }
    }
    // A host vector: the queue, or with one hardware queue (CUDA_DEVICE_MAX_CONNECTIONS=1,
    // where the stream's wait for the host could stall) the blocking call at the call, after
    // the stream's earlier work (docs/threads.md).
    {
        std::vector<float> host(100, static_cast<float>(me() + 1)), out(100, 0.f);
        HGAS_OK_OR_FAIL(hgas_allreduce_on_stream(out.data(), host.data(), 100, HGAS_FLOAT, HGAS_OP_SUM, f.s));
        HGAS_OK_OR_FAIL(hgas_stream_sync(f.s));
        EXPECT_EQ(out[99], static_cast<float>(n() * (n() + 1) / 2));
    }
    hgasi_coll_stats_t st{};
    HGAS_OK_OR_FAIL(hgasi_coll_stats(&st));
    if (expect_group && n() > 1) EXPECT_EQ(st.group_kernel, calls);
    if (!rank_threads || !one_gpu || n() == 1) EXPECT_EQ(st.group_kernel, 0u);
    CK(cudaFree(priv));
    HGAS_OK_OR_FAIL(hgas_free(bytes_buf));
}

TEST(CollStream, BadArgumentsFailAtTheCall) {
    rank_gpu f;
    f.open();
    void *buf;
    HGAS_OK_OR_FAIL(hgas_malloc_kind(64, HGAS_KIND_CUDA, &buf));
    EXPECT_EQ(hgas_allreduce_on_stream(buf, buf, 4, HGAS_BFLOAT16, HGAS_OP_XOR, f.s), HGAS_ERR_INVALID_ARG);
    EXPECT_NE(std::string(hgas_last_error()).find("bitwise"), std::string::npos) << hgas_last_error();
    EXPECT_EQ(hgas_team_allreduce_on_stream(77, buf, buf, 4, HGAS_FLOAT, HGAS_OP_SUM, f.s), HGAS_ERR_INVALID_ARG);
    EXPECT_NE(std::string(hgas_last_error()).find("77"), std::string::npos) << hgas_last_error();
    // Nothing was enqueued: the stream is idle and the next collective is the next everywhere.
    HGAS_OK_OR_FAIL(hgas_stream_sync(f.s));
    HGAS_OK_OR_FAIL(hgas_allreduce_on_stream(buf, buf, 4, HGAS_FLOAT, HGAS_OP_SUM, f.s));
    HGAS_OK_OR_FAIL(hgas_stream_sync(f.s));
    HGAS_OK_OR_FAIL(hgas_free(buf));
}

// Rank threads that meet: a member whose own arguments fail a check (a root out of range, an
// op its type lacks) fails at its call, the others fail at their stream's sync (the arguments
// differ), and the team's next collective is the same call on every member (before, the
// failing member did not meet, and every later collective of the team waited for it).
TEST(CollStream, OneMembersBadArgumentLeavesTheTeamInStep) {
    const char *e = std::getenv("HGAS_TEST_EXPECT_GROUP");
    if (!(e && std::string(e) == "1") || n() < 2)
        GTEST_SKIP() << "only rank threads meet on the host (HGAS_TEST_EXPECT_GROUP=1, 2 or more): this run's "
                        "ranks do not";
    rank_gpu f;
    f.open();
    float *buf;
    HGAS_OK_OR_FAIL(hgas_malloc_kind(64 * sizeof(float), HGAS_KIND_CUDA, reinterpret_cast<void **>(&buf)));
    const bool odd = me() == n() - 1;
    for (int round = 0; round < 2; ++round) {
        SCOPED_TRACE(round == 0 ? "root out of range" : "an op the type lacks");
        hgas_status_t st = round == 0 ? hgas_team_reduce_on_stream(HGAS_TEAM_WORLD, buf, buf, 16, HGAS_FLOAT,
                                                                   HGAS_OP_SUM, odd ? n() : 0, f.s)
                                      : hgas_team_allreduce_on_stream(HGAS_TEAM_WORLD, buf, buf, 16, HGAS_FLOAT,
                                                                      odd ? HGAS_OP_XOR : HGAS_OP_SUM, f.s);
        if (odd) {
            EXPECT_EQ(st, HGAS_ERR_INVALID_ARG);
            EXPECT_NE(std::string(hgas_last_error()).find(round == 0 ? "root" : "bitwise"), std::string::npos)
                << hgas_last_error();
            HGAS_OK_OR_FAIL(hgas_stream_sync(f.s));
        } else {
            EXPECT_EQ(st, HGAS_OK) << hgas_last_error();
            EXPECT_EQ(hgas_stream_sync(f.s), HGAS_ERR_INVALID_ARG);
            EXPECT_NE(std::string(hgas_last_error()).find("other arguments"), std::string::npos) << hgas_last_error();
        }
        // The next collective runs on every member, with its values.
        k_fill<float><<<1, 64, 0, f.s>>>(buf, 64, me());
        HGAS_OK_OR_FAIL(hgas_allreduce_on_stream(buf, buf, 64, HGAS_FLOAT, HGAS_OP_SUM, f.s));
        k_check_sum<float><<<1, 64, 0, f.s>>>(buf, 64, 0, n(), f.bad);
        HGAS_OK_OR_FAIL(hgas_stream_sync(f.s));
        EXPECT_EQ(f.take_bad(), 0u);
    }
    HGAS_OK_OR_FAIL(hgas_free(buf));
}

}  // namespace
