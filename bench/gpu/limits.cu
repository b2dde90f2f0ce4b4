/* hgas-gpu-limits — what the hardware allows for two of hgas's host-initiated GPU paths,
 * measured the best way CUDA can do them by hand, so that hgas's figures are read against a
 * floor and a ceiling from the same machine. One process, no hgas.
 *
 *   flag      host -> GPU -> host round trip through pinned memory: the host stores a number,
 *             a one-thread kernel on GPU A polling it (ld.acquire.sys) stores it back, the host
 *             spins until it reads it (raw limit). Any host-initiated operation that a GPU
 *             carries out and the host then waits for costs at least this.
 *   flag_peer the same, and in between the kernel stores 8 bytes into GPU B's memory and makes
 *             them visible system-wide (st.release.sys of the answer): the least a host-initiated
 *             8-byte put to a peer GPU, to remote completion, can cost without a copy engine
 *             (raw limit).
 *   flag_poll the flag round trip as hgas's copy agent does it: the host writes a 32-byte
 *             descriptor as two 16-byte words, each carrying the sequence number (one SSE store
 *             each); 1, 2, 4 or 8 warps of one block poll it with relaxed 16-byte loads, started
 *             a fraction of a round trip apart, so that the next poll to reach host memory after
 *             the host's store comes sooner than one poller's next; the first warp to see both
 *             words tagged takes it and thread 0 answers (st.release.sys). Measured per number
 *             of pollers, to choose the agent's.
 *   pipeline  GPU A -> pinned host ring -> GPU B in chunks of 1, 2 and 4 MiB, the device-to-host
 *             copy of chunk k+1 overlapping the host-to-device copy of chunk k, chained by events
 *             on two streams so that no host round trip sits between the stages (raw limit): the
 *             ceiling of staging through host memory between two GPUs. Then again with two
 *             streams each way, chunk k on stream k % 2, so that one chunk's copy is under way
 *             while the next one starts (does a second copy in flight hide the gap between
 *             chained copies?).
 *   kernel_copy  a copy as one launched kernel (one block of 512 threads per 64 KiB, at most
 *             two per SM) whose last block to finish releases a sequence number into pinned host
 *             memory, the host spinning on it: GPU A -> GPU A and pinned host -> GPU A, against the
 *             same kernel completed by cudaStreamSynchronize and cudaMemcpyAsync +
 *             cudaStreamSynchronize, alternated batch by batch (put_lat, timing "blocking"). The
 *             question: does a launched kernel with a posted-write completion beat the copy
 *             engines for the sizes above the copy agent's (one block) reach?
 * A and B are --devices (default 0,1); flag_peer needs two GPUs; with one GPU the pipeline runs
 * from GPU A through host memory back to GPU A (both PCIe directions of one link).
 *
 * flag and flag_peer give put_lat (one round trip, timing "pingpong"); pipeline gives put_bw
 * (a window of transfers, then one synchronize, as hgas-gpu-peers). Every result is checked:
 * the flag's last value in the peer's memory, the pipeline's destination against the pattern. */
#include "gpu_common.h"

#include <algorithm>

#include <immintrin.h>

namespace {

__device__ __forceinline__ uint64_t ld_acquire_sys(const volatile uint64_t *p) {
    uint64_t v;
    asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}
__device__ __forceinline__ void st_release_sys(volatile uint64_t *p, uint64_t v) {
    asm volatile("st.release.sys.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
__device__ __forceinline__ uint64_t now_ns() {
    uint64_t t;
    asm volatile("mov.u64 %0, %globaltimer;" : "=l"(t));
    return t;
}

/* Round trips `one`: `warm` untimed, then o.batches batches of `it`; microseconds per round
 * trip, one sample per batch, sorted. */
template <class F>
void time_round_trips(const gpu_opts &o, long warm, long it, std::vector<double> &samples, F &&one) {
    for (long k = 0; k < warm; ++k) one();
    for (int b = 0; b < o.batches; ++b) {
        const double t0 = gpu_now_s();
        for (long k = 0; k < it; ++k) one();
        samples[(size_t)b] = (gpu_now_s() - t0) * 1e6 / (double)it;
    }
    std::sort(samples.begin(), samples.end());
}

/* Answers pings 1..n; exits early when no ping comes for 2 s (the host gave up). */
__global__ void flag_kernel(const volatile uint64_t *ping, volatile uint64_t *pong, uint64_t *peer, uint64_t n) {
    for (uint64_t i = 1; i <= n; ++i) {
        const uint64_t t0 = now_ns();
        while (ld_acquire_sys(ping) != i)
            if (now_ns() - t0 > 2000000000ull) return;
        if (peer) *reinterpret_cast<volatile uint64_t *>(peer) = i;
        st_release_sys(pong, i);  /* the peer's 8 bytes are visible before the answer */
    }
}

int run_flag(const gpu_opts &o, int A, uint64_t *peer, int B) {
    uint64_t *ping = nullptr, *pong = nullptr;
    CK(cudaMallocHost((void **)&ping, 64));
    CK(cudaMallocHost((void **)&pong, 64));
    *ping = 0;
    *pong = 0;
    const long it = o.quick ? 2000 : 10000;
    const long warm = it / 10;
    const uint64_t total = (uint64_t)(warm + it * o.batches);
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    flag_kernel<<<1, 1, 0, s>>>(ping, pong, peer, total);
    CK_LAUNCH();
    std::vector<double> samples((size_t)o.batches);
    uint64_t i = 0;
    int ok = 1;
    auto one = [&]() {
        ++i;
        __atomic_store_n(ping, i, __ATOMIC_RELEASE);
        const double t0 = gpu_now_s();
        while (__atomic_load_n(pong, __ATOMIC_ACQUIRE) != i)
            if (gpu_now_s() - t0 > 2.0) gpu_die("flag round trip %llu: the kernel did not answer in 2 s", (unsigned long long)i);
    };
    time_round_trips(o, warm, it, samples, one);
    CK(cudaStreamSynchronize(s));
    if (peer) {
        uint64_t got = 0;
        CK(cudaMemcpy(&got, peer, 8, cudaMemcpyDefault));
        if (got != total) {
            fprintf(stderr, "%s: flag_peer: the peer GPU holds %llu, want %llu\n", g_prog, (unsigned long long)got,
                    (unsigned long long)total);
            ok = 0;
        }
    }
    gpu_point pt{"put_lat", "cuda",
                 peer ? "host flag -> kernel: 8 B store to the peer + st.release.sys -> host (raw limit)"
                      : "host flag -> kernel -> host flag, pinned memory (raw limit)",
                 peer ? "d2d-peer" : "h2d", "pinned", "pingpong", A, peer ? B : A, NULL, "host"};
    gpu_report_lat(o, pt, 8, samples.data(), o.batches, it, ok);
    CK(cudaStreamDestroy(s));
    CK(cudaFreeHost(ping));
    CK(cudaFreeHost(pong));
    return ok;
}

__device__ __forceinline__ uint4 ld_relaxed16(const uint4 *p) {
    uint4 v;
    asm volatile("ld.relaxed.sys.global.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p)
                 : "memory");
    return v;
}

/* Answers descriptors 1..n (flag_poll): `pollers` warps poll the two tagged words, warp w
 * starting w * stagger_ns after the others; the answer carries the sum of the words' payloads
 * so that the host checks that the whole descriptor was read. Exits after 2 s without one. */
__global__ void poll_kernel(const uint4 *desc, volatile uint64_t *pong, uint64_t n, int pollers,
                            unsigned stagger_ns) {
    __shared__ volatile uint64_t taken;
    __shared__ uint4 hdr[2];
    const int warp = (int)(threadIdx.x / 32), lane = (int)(threadIdx.x % 32);
    if (threadIdx.x == 0) taken = 0;
    __syncthreads();
    for (uint64_t i = 1; i <= n; ++i) {
        if (warp < pollers) {
            const uint64_t t0 = now_ns();
            while (now_ns() - t0 < (uint64_t)warp * stagger_ns) {
            }
            for (;;) {
                if (taken >= i) break;
                uint4 v = make_uint4(0, 0, 0, 0);
                if (lane < 2) v = ld_relaxed16(desc + lane);
                const unsigned ok = __ballot_sync(~0u, lane >= 2 || v.x == (uint32_t)i);
                if (ok == ~0u) {
                    if (lane < 2) hdr[lane] = v;
                    __syncwarp();
                    if (lane == 0) {
                        __threadfence_block();
                        taken = i;
                    }
                    break;
                }
                if (now_ns() - t0 > 2000000000ull) {
                    if (lane == 0) taken = ~0ull;  /* the host gave up: everyone leaves */
                    break;
                }
            }
        }
        __syncthreads();
        if (taken == ~0ull) return;
        if (threadIdx.x == 0) {
            const uint64_t a = ((uint64_t)hdr[0].z | ((uint64_t)hdr[0].w << 32));
            const uint64_t b = ((uint64_t)hdr[1].z | ((uint64_t)hdr[1].w << 32));
            st_release_sys(pong, a + b);
        }
        __syncthreads();
    }
}

int run_flag_poll(const gpu_opts &o, int A, int pollers) {
    uint4 *desc = nullptr;
    uint64_t *pong = nullptr;
    CK(cudaMallocHost((void **)&desc, 64));
    CK(cudaMallocHost((void **)&pong, 64));
    memset(desc, 0, 64);
    *pong = 0;
    const long it = o.quick ? 2000 : 10000;
    const long warm = it / 10;
    const uint64_t total = (uint64_t)(warm + it * o.batches);
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    /* A host round trip is about 1-1.5 us: spread the pollers' first loads over it. */
    const unsigned stagger = pollers > 1 ? 1200u / (unsigned)pollers : 0u;
    poll_kernel<<<1, 256, 0, s>>>(desc, pong, total, pollers, stagger);
    CK_LAUNCH();
    std::vector<double> samples((size_t)o.batches);
    uint64_t i = 0;
    int ok = 1;
    auto one = [&]() {
        ++i;
        /* payloads 3i and 5i: the answer must be 8i, so a torn descriptor shows */
        const __m128i w0 = _mm_set_epi64x((long long)(3 * i), (long long)(uint32_t)i);
        const __m128i w1 = _mm_set_epi64x((long long)(5 * i), (long long)(uint32_t)i);
        _mm_store_si128(reinterpret_cast<__m128i *>(desc), w0);
        _mm_store_si128(reinterpret_cast<__m128i *>(desc + 1), w1);
        const double t0 = gpu_now_s();
        uint64_t got;
        while ((got = __atomic_load_n(pong, __ATOMIC_ACQUIRE)) != 8 * i) {
            if (got != 8 * (i - 1) && got != 8 * i) {
                fprintf(stderr, "%s: flag_poll: answer %llu to descriptor %llu (torn read)\n", g_prog,
                        (unsigned long long)got, (unsigned long long)i);
                ok = 0;
            }
            if (gpu_now_s() - t0 > 2.0) gpu_die("flag_poll %llu: the kernel did not answer in 2 s", (unsigned long long)i);
        }
    };
    time_round_trips(o, warm, it, samples, one);
    CK(cudaStreamSynchronize(s));
    char path[160];
    snprintf(path, sizeof path, "host 32 B tagged descriptor -> %d polling warp(s), relaxed v4 loads -> host (raw limit)",
             pollers);
    gpu_point pt{"put_lat", "cuda", path, "h2d", "pinned", "pingpong", A, A, NULL, "host"};
    gpu_report_lat(o, pt, 8, samples.data(), o.batches, it, ok);
    CK(cudaStreamDestroy(s));
    CK(cudaFreeHost(desc));
    CK(cudaFreeHost(pong));
    return ok;
}

/* One transfer of `n` bytes from GPU A to GPU B through `slots` pinned chunks, all stages
 * queued: D2H of chunk k on sa after the H2D that last used its slot; H2D on sb after it. */
struct pipe {
    int A, B;
    cudaStream_t sa[2], sb[2]; /* chunk k's copies go on stream k % lanes of each direction */
    unsigned char *ring;
    size_t chunk;
    int slots, lanes;
    std::vector<cudaEvent_t> d2h, h2d;  /* per slot; created on A and B */
    std::vector<bool> used;
    size_t next = 0; /* the next chunk's number: slots go round across transfers, as hgas's ring does */
};

void pipe_transfer(pipe &p, unsigned char *dst, const unsigned char *src, size_t n) {
    for (size_t pos = 0; pos < n; pos += p.chunk) {
        const size_t len = std::min(p.chunk, n - pos);
        const size_t k = p.next++;
        const int sl = (int)(k % (size_t)p.slots);
        cudaStream_t sa = p.sa[k % (size_t)p.lanes], sb = p.sb[k % (size_t)p.lanes];
        unsigned char *buf = p.ring + (size_t)sl * p.chunk;
        if (p.used[(size_t)sl]) CK(cudaStreamWaitEvent(sa, p.h2d[(size_t)sl], 0));
        CK(cudaMemcpyAsync(buf, src + pos, len, cudaMemcpyDeviceToHost, sa));
        CK(cudaEventRecord(p.d2h[(size_t)sl], sa));
        CK(cudaStreamWaitEvent(sb, p.d2h[(size_t)sl], 0));
        CK(cudaMemcpyAsync(dst + pos, buf, len, cudaMemcpyHostToDevice, sb));
        CK(cudaEventRecord(p.h2d[(size_t)sl], sb));
        p.used[(size_t)sl] = true;
    }
}

/* Waits for every copy of the pipe. */
void pipe_sync(pipe &p) {
    for (int l = 0; l < p.lanes; ++l) CK(cudaStreamSynchronize(p.sb[l]));
}

int run_pipeline(const gpu_opts &o, int A, int B, unsigned char *src, unsigned char *dst, size_t chunk, int lanes) {
    pipe p{A, B, {}, {}, nullptr, chunk, 8, lanes, {}, {}, {}};
    p.d2h.resize((size_t)p.slots);
    p.h2d.resize((size_t)p.slots);
    p.used.assign((size_t)p.slots, false);
    CK(cudaMallocHost((void **)&p.ring, chunk * (size_t)p.slots));
    CK(cudaSetDevice(B));
    for (int l = 0; l < lanes; ++l) CK(cudaStreamCreateWithFlags(&p.sb[l], cudaStreamNonBlocking));
    for (auto &e : p.h2d) CK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    CK(cudaSetDevice(A));
    for (int l = 0; l < lanes; ++l) CK(cudaStreamCreateWithFlags(&p.sa[l], cudaStreamNonBlocking));
    for (auto &e : p.d2h) CK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    char path[160];
    snprintf(path, sizeof path, "D2H + H2D through pinned memory, %zu MiB chunks, event-chained%s (raw limit)",
             chunk >> 20, lanes > 1 ? ", 2 streams each way" : "");
    std::vector<unsigned char> pat(o.max_size), got(o.max_size);
    std::vector<double> samples((size_t)o.batches);
    int all_ok = 1;
    for (size_t s : gpu_sizes(o)) {
        if (s < chunk) continue;
        bench_fill(pat.data(), s, 3);
        CK(cudaMemcpy(src, pat.data(), s, cudaMemcpyHostToDevice));
        CK(cudaSetDevice(B));
        CK(cudaMemset(dst, 0xEE, s));
        CK(cudaDeviceSynchronize());
        CK(cudaSetDevice(A));
        pipe_transfer(p, dst, src, s);
        pipe_sync(p);
        CK(cudaMemcpy(got.data(), dst, s, cudaMemcpyDeviceToHost));
        const int ok = gpu_verify(got.data(), pat.data(), s, path);
        all_ok &= ok;
        const long n = gpu_bw_ops(o, s);
        for (long i = 0; i < n / 10 + 1; ++i) pipe_transfer(p, dst, src, s);
        pipe_sync(p);
        for (int b = 0; b < o.batches; ++b) {
            const double t0 = gpu_now_s();
            for (long i = 0; i < n; ++i) pipe_transfer(p, dst, src, s);
            pipe_sync(p);
            samples[(size_t)b] = gpu_now_s() - t0;
        }
        std::sort(samples.begin(), samples.end());
        gpu_point pt{"put_bw", "cuda", path, A != B ? "d2d-peer" : "d2d", "pinned", "window", A, B, NULL, "host"};
        gpu_report_bw(o, pt, s, samples.data(), o.batches, n, (double)n * (double)s, ok);
    }
    for (int l = 0; l < lanes; ++l) CK(cudaStreamDestroy(p.sa[l]));
    for (auto &e : p.d2h) CK(cudaEventDestroy(e));
    CK(cudaSetDevice(B));
    for (int l = 0; l < lanes; ++l) CK(cudaStreamDestroy(p.sb[l]));
    for (auto &e : p.h2d) CK(cudaEventDestroy(e));
    CK(cudaSetDevice(A));
    CK(cudaFreeHost(p.ring));
    return all_ok;
}

/* A grid-stride copy (16-byte words where both ends allow); the last block to finish resets
 * the block counter and releases `seq` into `flag` (pinned host memory) when flag is set. */
__global__ void flagged_copy_kernel(uint4 *dst, const uint4 *src, size_t words, unsigned *blocks_done,
                                    volatile uint64_t *flag, uint64_t seq) {
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    for (; i + 3 * stride < words; i += 4 * stride) {
        const uint4 a = src[i], b = src[i + stride], c = src[i + 2 * stride], d = src[i + 3 * stride];
        dst[i] = a;
        dst[i + stride] = b;
        dst[i + 2 * stride] = c;
        dst[i + 3 * stride] = d;
    }
    for (; i < words; i += stride) dst[i] = src[i];
    if (!flag) return;
    __syncthreads();
    __shared__ bool last;
    if (threadIdx.x == 0) {
        __threadfence(); /* this block's stores before its count */
        last = atomicAdd(blocks_done, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (last && threadIdx.x == 0) {
        __threadfence();
        *blocks_done = 0;
        st_release_sys(flag, seq);
    }
}

int run_kernel_copy(const gpu_opts &o, int A, unsigned char *dst, unsigned char *src_dev, unsigned char *src_host) {
    uint64_t *flag = nullptr;
    unsigned *blocks_done = nullptr;
    unsigned char *pat = nullptr, *chk = nullptr;
    CK(cudaMallocHost((void **)&flag, 64));
    CK(cudaMalloc((void **)&blocks_done, sizeof(unsigned)));
    CK(cudaMemset(blocks_done, 0, sizeof(unsigned)));
    CK(cudaMallocHost((void **)&pat, o.max_size));
    CK(cudaMallocHost((void **)&chk, o.max_size));
    *flag = 0;
    int sms = 0;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, A));
    cudaStream_t st;
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    uint64_t seq = 0;
    int all_ok = 1;
    struct variant {
        const char *path;
        int how; /* 0: kernel + host flag, 1: kernel + cudaStreamSynchronize, 2: cudaMemcpyAsync */
    };
    const variant vs[] = {{"SM copy kernel, last block releases a pinned host flag (raw limit)", 0},
                          {"SM copy kernel + cudaStreamSynchronize (raw limit)", 1},
                          {"cudaMemcpyAsync + cudaStreamSynchronize (raw limit)", 2}};
    for (int h2d = 0; h2d < 2; ++h2d) {
        const unsigned char *src = h2d ? src_host : src_dev;
        for (size_t s : gpu_sizes(o)) {
            if (s % 16) continue;
            const int blocks = (int)std::min<size_t>((s + 65535) / 65536, 2 * (size_t)sms);
            auto one = [&](int how) {
                if (how == 2) {
                    CK(cudaMemcpyAsync(dst, src, s, cudaMemcpyDefault, st));
                    CK(cudaStreamSynchronize(st));
                    return;
                }
                ++seq;
                flagged_copy_kernel<<<blocks, 512, 0, st>>>((uint4 *)dst, (const uint4 *)src, s / 16, blocks_done,
                                                            how == 0 ? flag : nullptr, seq);
                if (how == 1) {
                    CK(cudaStreamSynchronize(st));
                    return;
                }
                const double t0 = gpu_now_s();
                while (__atomic_load_n(flag, __ATOMIC_ACQUIRE) != seq)
                    if (gpu_now_s() - t0 > 2.0) gpu_die("kernel_copy: no flag from the copy kernel in 2 s");
            };
            /* Check each variant once: pattern in, poison out, one copy, compare. */
            int ok = 1;
            for (const variant &v : vs) {
                bench_fill(pat, s, (unsigned)(v.how + 3));
                if (h2d)
                    memcpy(src_host, pat, s);
                else
                    CK(cudaMemcpy(src_dev, pat, s, cudaMemcpyDefault));
                CK(cudaMemset(dst, 0xEE, s));
                CK(cudaDeviceSynchronize());
                one(v.how);
                CK(cudaStreamSynchronize(st));
                CK(cudaMemcpy(chk, dst, s, cudaMemcpyDefault));
                char what[160];
                snprintf(what, sizeof what, "kernel_copy %s %zu B (%s)", h2d ? "h2d" : "d2d", s, v.path);
                if (!gpu_verify(chk, pat, s, what)) ok = all_ok = 0;
            }
            const long it = gpu_lat_iters(o, s);
            std::vector<std::vector<double>> samples(3, std::vector<double>((size_t)o.batches));
            for (int k = 0; k < 3; ++k)
                for (long i = 0; i < it / 10 + 1; ++i) one(k);
            for (int b = 0; b < o.batches; ++b)
                for (int k = 0; k < 3; ++k) { /* alternated: a drift of the machine hits all three */
                    const double t0 = gpu_now_s();
                    for (long i = 0; i < it; ++i) one(k);
                    samples[(size_t)k][(size_t)b] = (gpu_now_s() - t0) * 1e6 / (double)it;
                }
            CK(cudaStreamSynchronize(st));
            for (const variant &v : vs) {
                gpu_point pt{"put_lat", "cuda", v.path, h2d ? "h2d" : "d2d", h2d ? "pinned" : NULL, "blocking", A,
                             A,         NULL,   "host"};
                gpu_report_lat(o, pt, s, samples[(size_t)v.how].data(), o.batches, it, ok);
            }
        }
    }
    CK(cudaStreamDestroy(st));
    CK(cudaFreeHost(flag));
    CK(cudaFree(blocks_done));
    CK(cudaFreeHost(pat));
    CK(cudaFreeHost(chk));
    return all_ok;
}

}  // namespace

int main(int argc, char **argv) {
    g_prog = "hgas-gpu-limits";
    gpu_safe_env();
    gpu_opts o;
    gpu_parse(argc, argv, &o, "measurements (--only): flag flag_poll flag_peer pipeline kernel_copy\n");
    const int ndev = gpu_count_or_die();
    const int A = o.devices[0], B = o.devices[1];
    if (A >= ndev) gpu_die("--devices: GPU %d does not exist (%d visible)", A, ndev);
    const bool two = B < ndev && B != A;
    gpu_pin(o, 0);
    g_device_name = gpu_device_name(A);
    g_transport = o.transport;
    printf("# hgas-gpu-limits: GPU %d = %s, %d GPU(s) visible; median of %d batches\n", A, g_device_name.c_str(), ndev,
           o.batches);
    fflush(stdout);
    CK(cudaSetDevice(A));
    if (gpu_selected(o, "flag")) run_flag(o, A, nullptr, A);
    if (gpu_selected(o, "flag_poll"))
        for (int pollers : {1, 2, 4, 8}) run_flag_poll(o, A, pollers);

    const int D = two ? B : A;  /* the pipeline's destination GPU: B, or A itself */
    if (!two && gpu_selected(o, "flag_peer")) gpu_skip("flag_peer", "needs 2 GPUs");
    unsigned char *src = nullptr, *dst = nullptr;
    CK(cudaMalloc((void **)&src, o.max_size));
    CK(cudaSetDevice(D));
    CK(cudaMalloc((void **)&dst, std::max<size_t>(o.max_size, 64)));
    CK(cudaSetDevice(A));
    if (two && gpu_selected(o, "flag_peer")) {
        int can = 0;
        CK(cudaDeviceCanAccessPeer(&can, A, B));
        if (!can) {
            gpu_skip("flag_peer", "GPU A has no peer access to GPU B");
        } else {
            CK(cudaDeviceEnablePeerAccess(B, 0));
            CK(cudaMemset(dst, 0, 8));
            run_flag(o, A, reinterpret_cast<uint64_t *>(dst), B);
        }
    }
    if (gpu_selected(o, "kernel_copy")) {
        unsigned char *host = nullptr, *dst_a = nullptr;
        CK(cudaMallocHost((void **)&host, o.max_size));
        CK(cudaMalloc((void **)&dst_a, o.max_size));
        run_kernel_copy(o, A, dst_a, src, host);
        CK(cudaFree(dst_a));
        CK(cudaFreeHost(host));
    }
    if (gpu_selected(o, "pipeline"))
        for (int lanes : {1, 2})
            for (size_t chunk : {size_t(1) << 20, size_t(2) << 20, size_t(4) << 20})
                if (chunk <= o.max_size) run_pipeline(o, A, D, src, dst, chunk, lanes);
    CK(cudaFree(src));
    CK(cudaSetDevice(D));
    CK(cudaFree(dst));
    CK(cudaSetDevice(A));
    if (g_check_failed) fprintf(stderr, "hgas-gpu-limits: FAILED: a data check failed (see above)\n");
    return g_check_failed ? 1 : 0;
}
