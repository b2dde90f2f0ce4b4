// Tagged messages with GPUs (ctest label gpu; tools/gpu-check.sh runs it): stream-ordered send
// and receive (hgas_send_on_stream / hgas_recv_on_stream) -- the message starts when the stream
// reaches it, later work on the stream sees it complete -- with values checked by kernels, a
// truncation that lets the stream go on and is reported by hgas_stream_sync, and bad arguments;
// typed messages of device memory (vector, indexed, 3-D subarray) packed and unpacked by the
// GPU, checked against a CPU reference. Every wait is bounded (HGAS_TIMEOUT).
#include <hgas/hgas.h>
#include <hgas/hgas_device.h>

#include <cuda_runtime.h>

#include <cstring>
#include <string>
#include <vector>

#include "gpu_test.hpp"

namespace {

using namespace gpu_test;

int right() { return (me() + 1) % n(); }
int left() { return (me() + n() - 1) % n(); }

__device__ unsigned char dpat(int from, int to, size_t i, int salt) {
    return static_cast<unsigned char>((from * 131 + to * 31 + (i + salt * 7919) * 7 + (i >> 8)) & 0xff);
}
unsigned char hpat(int from, int to, size_t i, int salt) {
    return static_cast<unsigned char>((from * 131 + to * 31 + (i + salt * 7919) * 7 + (i >> 8)) & 0xff);
}

__global__ void k_fill(unsigned char *p, size_t n, int from, int to, int salt) {
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
        p[i] = dpat(from, to, i, salt);
}
__global__ void k_check(const unsigned char *p, size_t n, int from, int to, int salt, unsigned long long *bad) {
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
        if (p[i] != dpat(from, to, i, salt)) atomicAdd(bad, 1ull);
}

// The rank's GPU with a second stream: sends go on s, receives on rcv.
struct streams : rank_gpu {
    cudaStream_t rcv = nullptr;
    void open() {
        rank_gpu::open();
        CK(cudaStreamCreateWithFlags(&rcv, cudaStreamNonBlocking));
    }
    ~streams() {
        if (rcv) cudaStreamDestroy(rcv);
    }
};

// Rank i sends to i+1 on one stream and receives from i-1 on another (one stream would wait
// for its receive before reaching its send: every rank would wait, as with NCCL). The fill
// kernel runs before the send on its stream, the check kernel after the receive on its
// stream, and a kernel after the send overwrites the source: the receiver must never see it.
TEST(MsgStream, RingOnStreams) {
    streams st;
    st.open();
    const size_t sizes[] = {0, 8, 1000, 64 << 10, (4 << 20) + 3};
    const size_t maxsz = (4 << 20) + 64;
    unsigned char *sb = nullptr, *rb = nullptr;
    CK(cudaMalloc(&sb, maxsz));
    CK(cudaMalloc(&rb, maxsz));
    hgas_msg_info_t *info = nullptr;
    CK(cudaMallocHost(&info, sizeof *info * 8));
    int salt = 0;
    for (size_t sz : sizes) {
        ++salt;
        k_fill<<<64, 256, 0, st.s>>>(sb, sz, me(), right(), salt);
        CK(cudaMemsetAsync(rb, 0xee, maxsz, st.rcv));
        info[salt] = hgas_msg_info_t{-5, -5, 12345};
        HGAS_OK_OR_FAIL(hgas_recv_on_stream(rb, maxsz, left(), 60 + salt, &info[salt], st.rcv));
        k_check<<<64, 256, 0, st.rcv>>>(rb, sz, left(), me(), salt, st.bad);
        HGAS_OK_OR_FAIL(hgas_send_on_stream(sb, sz, right(), 60 + salt, st.s));
        k_fill<<<64, 256, 0, st.s>>>(sb, sz, 99, 99, 99);  // after the send is complete
        HGAS_OK_OR_FAIL(hgas_stream_sync(st.rcv));
        HGAS_OK_OR_FAIL(hgas_stream_sync(st.s));
        EXPECT_EQ(st.take_bad(), 0u) << sz << " bytes";
        EXPECT_EQ(info[salt].source, left());
        EXPECT_EQ(info[salt].tag, 60 + salt);
        EXPECT_EQ(info[salt].bytes, sz);
        unsigned char past = 0;
        CK(cudaMemcpy(&past, rb + sz, 1, cudaMemcpyDeviceToHost));
        EXPECT_EQ(past, 0xee) << "a byte past the message was written (" << sz << " bytes)";
        HGAS_OK_OR_FAIL(hgas_barrier());
    }
    // Many on one stream each way: they match in the order the streams reach them.
    const int many = 40;
    const size_t msz = 3000;
    for (int i = 0; i < many; ++i) {
        k_fill<<<8, 256, 0, st.s>>>(sb + i * msz, msz, me(), right(), 100 + i);
        HGAS_OK_OR_FAIL(hgas_send_on_stream(sb + i * msz, msz, right(), 5, st.s));
        HGAS_OK_OR_FAIL(hgas_recv_on_stream(rb + i * msz, msz, left(), 5, nullptr, st.rcv));
        k_check<<<8, 256, 0, st.rcv>>>(rb + i * msz, msz, left(), me(), 100 + i, st.bad);
    }
    HGAS_OK_OR_FAIL(hgas_stream_sync(st.rcv));
    HGAS_OK_OR_FAIL(hgas_stream_sync(st.s));
    EXPECT_EQ(st.take_bad(), 0u) << "messages of one tag overtook each other";
    HGAS_OK_OR_FAIL(hgas_barrier());
    cudaFreeHost(info);
    cudaFree(sb);
    cudaFree(rb);
}

// Scoped and typed messages on streams: a library's scoped message is not taken by the
// application's wildcard receive on the stream; a strided face (a column of 4-byte elements)
// sent typed on a stream arrives in a typed receive on a stream with another stride; the
// layouts are freed right after the calls (they are copied).
__global__ void k_fill_col(unsigned char *p, size_t rows, size_t stride, int from, int to, int salt) {
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < rows * 4; i += size_t(gridDim.x) * blockDim.x)
        p[(i / 4) * stride + i % 4] = dpat(from, to, i, salt);
}
__global__ void k_check_col(const unsigned char *p, size_t rows, size_t stride, int from, int to, int salt,
                            unsigned long long *bad) {
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < rows * 4; i += size_t(gridDim.x) * blockDim.x)
        if (p[(i / 4) * stride + i % 4] != dpat(from, to, i, salt)) atomicAdd(bad, 1ull);
}
TEST(MsgStream, ScopedAndTypedOnStreams) {
    streams st;
    st.open();
    hgas_msg_ctx_t lib;
    HGAS_OK_OR_FAIL(hgas_msg_ctx_create(&lib));
    unsigned char *sb = nullptr, *rb = nullptr;
    const size_t rows = 5000, sstride = 64, rstride = 12;
    CK(cudaMalloc(&sb, rows * sstride));
    CK(cudaMalloc(&rb, rows * sstride));
    int *flags = nullptr;
    CK(cudaMallocHost(&flags, 2 * sizeof(int)));
    flags[0] = 11;
    flags[1] = 22;
    // scoped: the world receive takes the world message, the scoped one the library's
    HGAS_OK_OR_FAIL(hgas_send_on_stream_ctx(lib, &flags[0], sizeof(int), right(), 3, st.s));
    HGAS_OK_OR_FAIL(hgas_send_on_stream(&flags[1], sizeof(int), right(), 3, st.s));
    int *got = nullptr;
    CK(cudaMallocHost(&got, 2 * sizeof(int)));
    got[0] = got[1] = 0;
    HGAS_OK_OR_FAIL(hgas_recv_on_stream(&got[0], sizeof(int), HGAS_ANY_RANK, HGAS_ANY_TAG, nullptr, st.rcv));
    HGAS_OK_OR_FAIL(hgas_recv_on_stream_ctx(lib, &got[1], sizeof(int), HGAS_ANY_RANK, HGAS_ANY_TAG, nullptr, st.rcv));
    HGAS_OK_OR_FAIL(hgas_stream_sync(st.rcv));
    HGAS_OK_OR_FAIL(hgas_stream_sync(st.s));
    EXPECT_EQ(got[0], 22) << "the world receive matched the library's message";
    EXPECT_EQ(got[1], 11);
    // typed
    hgas_layout_t ls, lr;
    HGAS_OK_OR_FAIL(hgas_layout_vector(rows, 4, sstride, &ls));
    HGAS_OK_OR_FAIL(hgas_layout_vector(rows, 4, rstride, &lr));
    k_fill_col<<<32, 256, 0, st.s>>>(sb, rows, sstride, me(), right(), 3);
    CK(cudaMemsetAsync(rb, 0xee, rows * sstride, st.rcv));
    hgas_msg_info_t *info = nullptr;
    CK(cudaMallocHost(&info, sizeof *info));
    HGAS_OK_OR_FAIL(hgas_recv_typed_on_stream_ctx(lib, rb, lr, left(), 4, info, st.rcv));
    k_check_col<<<32, 256, 0, st.rcv>>>(rb, rows, rstride, left(), me(), 3, st.bad);
    HGAS_OK_OR_FAIL(hgas_send_typed_on_stream_ctx(lib, sb, ls, right(), 4, st.s));
    HGAS_OK_OR_FAIL(hgas_layout_free(ls));
    HGAS_OK_OR_FAIL(hgas_layout_free(lr));
    k_fill_col<<<32, 256, 0, st.s>>>(sb, rows, sstride, 99, 99, 99);  // after the send is complete
    HGAS_OK_OR_FAIL(hgas_stream_sync(st.rcv));
    HGAS_OK_OR_FAIL(hgas_stream_sync(st.s));
    EXPECT_EQ(st.take_bad(), 0u);
    EXPECT_EQ(info->bytes, rows * 4);
    EXPECT_EQ(info->source, left());
    // bad arguments enqueue nothing
    EXPECT_EQ(hgas_send_typed_on_stream(sb, nullptr, right(), 4, st.s), HGAS_ERR_INVALID_ARG);
    EXPECT_NE(std::string(hgas_last_error()).find("layout is NULL"), std::string::npos) << hgas_last_error();
    EXPECT_EQ(hgas_send_on_stream_ctx(lib + 100, &flags[0], 4, right(), 3, st.s), HGAS_ERR_INVALID_ARG);
    EXPECT_NE(std::string(hgas_last_error()).find("scope"), std::string::npos) << hgas_last_error();
    HGAS_OK_OR_FAIL(hgas_barrier());
    HGAS_OK_OR_FAIL(hgas_msg_ctx_destroy(lib));
    cudaFreeHost(info);
    cudaFreeHost(got);
    cudaFreeHost(flags);
    cudaFree(sb);
    cudaFree(rb);
}

// A receive too small for its message fails without holding the stream: later work runs, and
// hgas_stream_sync reports the truncation naming both sizes; the next message is unharmed.
TEST(MsgStream, TruncationLetsTheStreamGoOn) {
    streams st;
    st.open();
    unsigned char *sb = nullptr, *rb = nullptr;
    CK(cudaMalloc(&sb, 4096));
    CK(cudaMalloc(&rb, 4096));
    k_fill<<<4, 256, 0, st.s>>>(sb, 4096, me(), right(), 7);
    HGAS_OK_OR_FAIL(hgas_send_on_stream(sb, 4096, right(), 8, st.s));
    HGAS_OK_OR_FAIL(hgas_send_on_stream(sb, 100, right(), 9, st.s));
    HGAS_OK_OR_FAIL(hgas_recv_on_stream(rb, 1000, left(), 8, nullptr, st.rcv));
    EXPECT_EQ(hgas_stream_sync(st.rcv), HGAS_ERR_TRUNCATED);
    EXPECT_NE(std::string(hgas_last_error()).find("4096 bytes but the receive buffer holds only 1000"), std::string::npos)
        << hgas_last_error();
    HGAS_OK_OR_FAIL(hgas_recv_on_stream(rb, 1000, left(), 9, nullptr, st.rcv));
    k_check<<<4, 256, 0, st.rcv>>>(rb, 100, left(), me(), 7, st.bad);
    HGAS_OK_OR_FAIL(hgas_stream_sync(st.rcv));
    HGAS_OK_OR_FAIL(hgas_stream_sync(st.s));
    EXPECT_EQ(st.take_bad(), 0u);
    HGAS_OK_OR_FAIL(hgas_barrier());
    cudaFree(sb);
    cudaFree(rb);
}

// Bad arguments fail at once, naming the call, and enqueue nothing.
TEST(MsgStream, BadArgumentsEnqueueNothing) {
    streams st;
    st.open();
    int x = 0;
    EXPECT_EQ(hgas_send_on_stream(&x, 4, n(), 1, st.s), HGAS_ERR_INVALID_ARG);
    EXPECT_NE(std::string(hgas_last_error()).find("hgas_send_on_stream: destination rank"), std::string::npos)
        << hgas_last_error();
    EXPECT_EQ(hgas_send_on_stream(&x, 4, 0, -3, st.s), HGAS_ERR_INVALID_ARG);
    EXPECT_EQ(hgas_recv_on_stream(nullptr, 4, 0, 1, nullptr, st.rcv), HGAS_ERR_INVALID_ARG);
    EXPECT_NE(std::string(hgas_last_error()).find("hgas_recv_on_stream: the buffer is NULL"), std::string::npos)
        << hgas_last_error();
    EXPECT_EQ(hgas_recv_on_stream(&x, 4, n() + 2, 1, nullptr, st.rcv), HGAS_ERR_INVALID_ARG);
    // Nothing was enqueued: both streams are idle at once.
    EXPECT_EQ(cudaStreamQuery(st.s), cudaSuccess);
    EXPECT_EQ(cudaStreamQuery(st.rcv), cudaSuccess);
    HGAS_OK_OR_FAIL(hgas_barrier());
}

// Typed messages of device memory (cudaMalloc'd buffers at both ends), packed and unpacked by
// the GPU: a strided halo face of single floats, a subarray of rows, an indexed layout, and a
// vector of odd-sized blocks (the byte kernel); each checked against the CPU's reference, and a
// typed send received as plain bytes checked against the CPU's packing.
struct ref_layout {
    hgas_layout_t l = nullptr;
    std::vector<std::pair<size_t, size_t>> blocks;  // (offset, bytes), in packed order
    size_t extent = 0;
};

ref_layout vector_layout(size_t count, size_t block, size_t stride) {
    ref_layout r;
    EXPECT_EQ(hgas_layout_vector(count, block, stride, &r.l), HGAS_OK) << hgas_last_error();
    for (size_t i = 0; i < count; ++i) r.blocks.emplace_back(i * stride, block);
    r.extent = (count - 1) * stride + block;
    return r;
}

std::vector<ref_layout> layouts() {
    std::vector<ref_layout> v;
    v.push_back(vector_layout(64 * 64, 4, 16 * 4));  // x = 0 face of a 64 x 64 x 16 float array
    v.push_back(vector_layout(1000, 3, 7));
    {
        ref_layout r;
        const size_t sizes[3] = {16, 32, 40}, sub[3] = {8, 4, 24}, starts[3] = {3, 5, 7}, e = 4;
        EXPECT_EQ(hgas_layout_subarray3d(sizes, sub, starts, e, &r.l), HGAS_OK) << hgas_last_error();
        for (size_t i = 0; i < sub[0]; ++i)
            for (size_t j = 0; j < sub[1]; ++j)
                r.blocks.emplace_back((((starts[0] + i) * sizes[1] + starts[1] + j) * sizes[2] + starts[2]) * e, sub[2] * e);
        r.extent = sizes[0] * sizes[1] * sizes[2] * e;
        v.push_back(r);
    }
    {
        ref_layout r;
        std::vector<size_t> len, displ;
        size_t at = 5;
        for (size_t i = 0; i < 50; ++i) {
            len.push_back(i * 7 + 1);
            displ.push_back(at);
            at += len.back() + (i % 3) * 11;
        }
        std::swap(displ[3], displ[17]);  // blocks need not be in buffer order
        std::swap(len[3], len[17]);
        EXPECT_EQ(hgas_layout_indexed(len.size(), len.data(), displ.data(), &r.l), HGAS_OK) << hgas_last_error();
        for (size_t i = 0; i < len.size(); ++i) r.blocks.emplace_back(displ[i], len[i]);
        r.extent = at;
        v.push_back(r);
    }
    return v;
}

TEST(MsgTyped, DeviceLayoutsAgainstCpuReference) {
    ASSERT_TRUE(hgas_kind_available(HGAS_KIND_CUDA));
    ASSERT_EQ(cudaSetDevice(hgas_device_gpu()), cudaSuccess);
    int salt = 0;
    for (auto &L : layouts()) {
        ++salt;
        const size_t E = L.extent;
        std::vector<unsigned char> hs(E), got(E), want(E, 0xee);
        for (size_t i = 0; i < E; ++i) hs[i] = hpat(me(), right(), i, salt);
        unsigned char *ds = nullptr, *dr = nullptr;
        CK(cudaMalloc(&ds, E));
        CK(cudaMalloc(&dr, E));
        CK(cudaMemcpy(ds, hs.data(), E, cudaMemcpyHostToDevice));
        CK(cudaMemset(dr, 0xee, E));
        hgas_handle_t h;
        hgas_msg_info_t info{};
        HGAS_OK_OR_FAIL(hgas_irecv_typed(dr, L.l, left(), 70 + salt, &info, &h));
        HGAS_OK_OR_FAIL(hgas_send_typed(ds, L.l, right(), 70 + salt));
        HGAS_OK_OR_FAIL(hgas_wait(h));
        CK(cudaMemcpy(got.data(), dr, E, cudaMemcpyDeviceToHost));
        size_t packed = 0;
        for (auto [off, len] : L.blocks) {
            for (size_t i = 0; i < len; ++i) want[off + i] = hpat(left(), me(), off + i, salt);
            packed += len;
        }
        EXPECT_EQ(info.bytes, packed);
        size_t bad = 0, first = E;
        for (size_t i = 0; i < E; ++i)
            if (got[i] != want[i]) {
                ++bad;
                first = std::min(first, i);
            }
        EXPECT_EQ(bad, 0u) << "layout " << salt << ": bytes differ from the CPU reference (gaps must stay 0xee); "
                           << "first at " << first << ": 0x" << std::hex << (first < E ? int(got[first]) : 0)
                           << ", want 0x" << (first < E ? int(want[first]) : 0) << std::dec;
        // Typed send, plain receive: the packed bytes in layout order.
        std::vector<unsigned char> plain(packed + 1, 0xee);
        HGAS_OK_OR_FAIL(hgas_irecv(plain.data(), packed + 1, left(), 80 + salt, nullptr, &h));
        HGAS_OK_OR_FAIL(hgas_send_typed(ds, L.l, right(), 80 + salt));
        HGAS_OK_OR_FAIL(hgas_wait(h));
        size_t o = 0;
        bad = 0;
        for (auto [off, len] : L.blocks)
            for (size_t i = 0; i < len; ++i) bad += plain[o++] != hpat(left(), me(), off + i, salt);
        EXPECT_EQ(bad, 0u) << "layout " << salt << ": packed order differs from the CPU's";
        HGAS_OK_OR_FAIL(hgas_barrier());
        cudaFree(ds);
        cudaFree(dr);
        hgas_layout_free(L.l);
    }
}

}  // namespace
