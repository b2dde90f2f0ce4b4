// Collectives called from kernels (hgas/hgas_device.cuh, impl/device_coll.cuh; ctest label gpu,
// tools/gpu-check.sh's tests step): team barrier, broadcast, fcollect and sum/min/max/prod
// reductions at thread, warp and block scope, on the world team and on a strided team, with a
// workspace small enough that the reductions run in several chunks; values checked against a
// CPU reference, in place and not; bad teams, roots and workspaces reported with their message.
//
// A kernel barrier across ranks needs every rank's kernel running at once: on one GPU, ranks as
// processes take turns (time slicing), so the multi-rank runs use ranks as threads of one
// process (hgasrun --threads, HGAS_GPU_SHARING=threads: one context, kernels side by side).
#include <hgas/hgas_device.cuh>

#include <cstdint>
#include <string>
#include <vector>

#include "gpu_test.hpp"

namespace {

namespace hd = hgas::device;
using hd::scope;

using namespace gpu_test;

// Member i's element e: signs and sizes vary, small enough that sums and products are exact.
__host__ __device__ inline long long val(int i, size_t e) {
    return static_cast<long long>(e % 13) * (i + 1) - 5 * i + static_cast<long long>(e % 3);
}

// Every rank runs it; members of `t` run the collectives, then every rank the world barrier.
// out: [sum | min | max | prod | in-place sum | double sum] (6 * count), bdst / fdst symmetric.
template <scope S>
__global__ void k_colls(hd::ctx c, hd::team t, hd::coll_workspace w, const long long *src, long long *out,
                        long long *inplace, double *dsrc, double *ddst, long long *bdst, long long *fdst, size_t count,
                        int root, int rounds) {
    const bool member = hd::coll_plan::index_of(t, c.me) >= 0;
    for (int r = 0; r < rounds && member; ++r) {
        hd::team_barrier<S>(c, t, w);
        hd::sum_reduce<S>(c, t, w, out, src, count);
        hd::min_reduce<S>(c, t, w, out + count, src, count);
        hd::max_reduce<S>(c, t, w, out + 2 * count, src, count);
        hd::prod_reduce<S>(c, t, w, out + 3 * count, src, count < 4 ? count : 4);
        hd::sum_reduce<S>(c, t, w, inplace, inplace, r == 0 ? count : 0);  // in place, once
        hd::sum_reduce<S>(c, t, w, ddst, dsrc, count);
        hd::broadcast<S>(c, t, w, bdst, src, count * sizeof(long long), root);
        hd::fcollect<S>(c, t, w, fdst, src, count * sizeof(long long));
    }
    hd::barrier_all<S>(c);
}

template <scope S>
__global__ void k_bad(hd::ctx c, hd::team t, hd::coll_workspace w, long long *buf, int which) {
    if (which == 0) hd::team_barrier<S>(c, t, w);
    if (which == 1) hd::broadcast<S>(c, t, w, buf, buf, 8, t.size);
    if (which == 2) hd::sum_reduce<S>(c, t, w, buf, buf, 1);
}

// A zeroed workspace of `bytes` in the cuda heap (symmetric: every rank calls).
void *workspace(size_t bytes) {
    void *w = nullptr;
    EXPECT_EQ(hgas_malloc_kind(bytes, HGAS_KIND_CUDA, &w), HGAS_OK) << hgas_last_error();
    EXPECT_EQ(cudaMemset(w, 0, bytes), cudaSuccess);
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    EXPECT_EQ(hgas_barrier(), HGAS_OK) << hgas_last_error();
    return w;
}

template <scope S>
void colls_on(hd::team t, size_t count, int root) {
    rank_gpu g;
    g.open(true);
    const int idx = hd::coll_plan::index_of(t, me());
    // Slots of 512 bytes: 64 elements a chunk, so count > 64 runs in chunks.
    const size_t wbytes = hd::coll_plan::workspace_bytes(t.size, 512);
    void *wbase = workspace(wbytes);
    const hd::coll_workspace w{wbase, wbytes};
    long long *src, *out, *inplace, *bdst, *fdst;
    double *dsrc, *ddst;
    CK(cudaMalloc(&src, count * 8));
    CK(cudaMalloc(&out, 6 * count * 8));
    CK(cudaMalloc(&inplace, count * 8));
    CK(cudaMalloc(&dsrc, count * 8));
    CK(cudaMalloc(&ddst, count * 8));
    HGAS_OK_OR_FAIL(hgas_malloc_kind(count * 8, HGAS_KIND_CUDA, reinterpret_cast<void **>(&bdst)));
    HGAS_OK_OR_FAIL(hgas_malloc_kind(count * 8 * static_cast<size_t>(t.size), HGAS_KIND_CUDA,
                                     reinterpret_cast<void **>(&fdst)));
    std::vector<long long> h(count);
    std::vector<double> hd_(count);
    for (size_t e = 0; e < count; ++e) h[e] = val(idx < 0 ? 0 : idx, e), hd_[e] = 0.5 * static_cast<double>(h[e]);
    CK(cudaMemcpy(src, h.data(), count * 8, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(inplace, h.data(), count * 8, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dsrc, hd_.data(), count * 8, cudaMemcpyHostToDevice));
    k_colls<S><<<1, threads_of<S>(), 0, g.s>>>(g.c, t, w, src, out, inplace, dsrc, ddst, bdst, fdst, count, root, 3);
    CK(cudaGetLastError());
    HGAS_OK_OR_FAIL(hgas_stream_sync(g.s));
    if (idx >= 0) {
        std::vector<long long> o(6 * count), ip(count), b(count), f(count * static_cast<size_t>(t.size));
        std::vector<double> dd(count);
        CK(cudaMemcpy(o.data(), out, o.size() * 8, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(ip.data(), inplace, count * 8, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(dd.data(), ddst, count * 8, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(b.data(), bdst, count * 8, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(f.data(), fdst, f.size() * 8, cudaMemcpyDeviceToHost));
        size_t bad[7] = {};
        for (size_t e = 0; e < count; ++e) {
            long long sum = 0, mn = val(0, e), mx = val(0, e), prod = 1;
            double dsum = 0;
            for (int i = 0; i < t.size; ++i) {
                sum += val(i, e);
                mn = val(i, e) < mn ? val(i, e) : mn;
                mx = val(i, e) > mx ? val(i, e) : mx;
                prod *= val(i, e);
                dsum += 0.5 * static_cast<double>(val(i, e));
            }
            bad[0] += o[e] != sum;
            bad[1] += o[count + e] != mn;
            bad[2] += o[2 * count + e] != mx;
            bad[3] += e < 4 && o[3 * count + e] != prod;
            bad[4] += ip[e] != sum;
            bad[5] += dd[e] != dsum;
            bad[6] += b[e] != val(root, e);
            for (int i = 0; i < t.size; ++i) bad[6] += f[static_cast<size_t>(i) * count + e] != val(i, e);
        }
        const char *what[7] = {"sum", "min", "max", "prod", "in-place sum", "double sum", "broadcast/fcollect"};
        for (int k = 0; k < 7; ++k)
            EXPECT_EQ(bad[k], 0u) << name_of(S) << " scope, team {" << t.start << "," << t.stride << "," << t.size
                                  << "}, " << count << " elements: wrong " << what[k];
    }
    HGAS_OK_OR_FAIL(hgas_barrier());
    HGAS_OK_OR_FAIL(hgas_free(fdst));
    HGAS_OK_OR_FAIL(hgas_free(bdst));
    HGAS_OK_OR_FAIL(hgas_free(wbase));
    cudaFree(src);
    cudaFree(out);
    cudaFree(inplace);
    cudaFree(dsrc);
    cudaFree(ddst);
}

template <scope S>
void colls_scope() {
    const hd::team world{0, 1, n()};
    for (size_t count : {size_t{1}, size_t{64}, size_t{1000}}) colls_on<S>(world, count, n() - 1);
    if (n() >= 4) colls_on<S>(hd::team{1, 2, n() / 2}, 200, 0);  // ranks 1, 3, ...
}

TEST(DeviceColl, Thread) { colls_scope<scope::thread>(); }
TEST(DeviceColl, Warp) { colls_scope<scope::warp>(); }
TEST(DeviceColl, Block) { colls_scope<scope::block>(); }

TEST(DeviceColl, BadArgumentsAreReported) {
    rank_gpu g;
    g.open(true);
    const size_t wbytes = hd::coll_plan::workspace_bytes(n(), 256);
    void *wbase = workspace(wbytes);
    long long *buf;
    HGAS_OK_OR_FAIL(hgas_malloc_kind(64, HGAS_KIND_CUDA, reinterpret_cast<void **>(&buf)));
    const hd::team world{0, 1, n()};
    // A team this rank is not in (the next rank alone; rank 0 with one rank: a team beyond the job).
    k_bad<scope::block><<<1, 64, 0, g.s>>>(g.c, hd::team{(me() + 1) % (n() + 1), 1, 1}, hd::coll_workspace{wbase, wbytes},
                                           buf, 0);
    CK(cudaGetLastError());
    EXPECT_EQ(hgas_stream_sync(g.s), HGAS_ERR_INVALID_ARG);
    EXPECT_NE(std::string(hgas_last_error()).find("does not hold this rank"), std::string::npos) << hgas_last_error();
    k_bad<scope::thread><<<1, 1, 0, g.s>>>(g.c, world, hd::coll_workspace{wbase, wbytes}, buf, 1);
    CK(cudaGetLastError());
    EXPECT_EQ(hgas_stream_sync(g.s), HGAS_ERR_INVALID_ARG);
    EXPECT_NE(std::string(hgas_last_error()).find("root"), std::string::npos) << hgas_last_error();
    k_bad<scope::warp><<<1, 32, 0, g.s>>>(g.c, world, hd::coll_workspace{wbase, 100}, buf, 2);
    CK(cudaGetLastError());
    EXPECT_EQ(hgas_stream_sync(g.s), HGAS_ERR_INVALID_ARG);
    EXPECT_NE(std::string(hgas_last_error()).find("workspace too small"), std::string::npos) << hgas_last_error();
    HGAS_OK_OR_FAIL(hgas_barrier());
    HGAS_OK_OR_FAIL(hgas_free(buf));
    HGAS_OK_OR_FAIL(hgas_free(wbase));
}

}  // namespace
