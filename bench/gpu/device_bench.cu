/* hgas-device-bench — hgas's device API (include/hgas/hgas_device.cuh) between the GPUs of two
 * ranks, in the record shape of hgas-nvshmem-peer's device measurements so that
 * tools/bench-plot.py pairs them (same bench, direction, initiator, timing) and prints the
 * hgas/NVSHMEM ratios; and the raw limit of the hardware in the same run, with its ratios
 * printed here.
 *
 *   build/tools/hgasrun/hgasrun -n 2 build/bench/gpu/hgas-device-bench [options]
 *
 * Rank r uses GPU hgas_device_gpu() (local rank % GPUs; with one GPU both share it and the
 * direction is d2d). With -n 1 the rank puts into its own heap (direction d2d, no ping-pongs):
 * the setup hgas-nvshmem-peer has on a machine with one GPU, so that its records pair with
 * these like for like. Kernels are timed with CUDA events on rank 0; ping-pongs start aligned
 * by hgas_barrier_on_stream (as NVSHMEM's by nvshmemx_barrier_all_on_stream).
 *   dev_put_signal  put_signal_lat: ping-pong of put_signal_nbi + signal_wait_until, one
 *                   thread on each GPU, one way (pingpong/2); up to 1 MiB
 *   dev_p           put_lat 8 B: ping-pong of p + signal_wait_until on the same word, one thread
 *   dev_g           get_lat 8 B: g of rank 1's word (rank 0's own with -n 1), each read depending on
 *                   the last (device-loop)
 *   dev_fadd        fadd_lat 8 B: atomic_fetch_add on rank 1's word (as dev_g), dependent (device-loop)
 *   dev_put_block   put_bw: put<block> by up to 32 blocks of 512 threads (64 KiB or more each),
 *                   N times in one kernel, then quiet (device-loop)
 *   stream_put      put_bw: N hgas_put_on_stream back to back, then hgas_quiet_on_stream and
 *                   hgas_stream_sync (window); median_us is the time per operation
 *   raw             raw_flag_lat 8 B: a flag ping-pong through peer memory with plain volatile
 *                   stores and loads, one thread each (the hardware's floor, impl "cuda"); and
 *                   raw_release_lat: 8 data bytes, then the flag with st.release.sys, the wait
 *                   confirmed by an acquire load (the floor of a correct put_signal)
 *   raw_store       put_bw: the same grid as dev_put_block copying with plain 16-byte stores
 *                   into the peer pointer, then __threadfence_system (the SM-store peak, impl
 *                   "cuda"); needs the peer mapped
 * With HGAS_DEVICE_PROXY=force (gpu-check runs it so, --transport proxy) every hgas operation
 * goes through the proxy: its cost, on the same GPUs.
 * Data checks: every measurement checks what arrived once before it is timed. */
#include "gpu_common.h"

#include <hgas/hgas_device.cuh>

#include <deque>
#include <string>
#include <vector>

namespace {

namespace hd = hgas::device;

#define HCK(call)                                                                                    \
    do {                                                                                             \
        hgas_status_t hck_s_ = (call);                                                               \
        if (hck_s_ != HGAS_OK) {                                                                     \
            fprintf(stderr, "%s: rank %d: FAILED: %s at %s:%d: %s\n", g_prog, g_rank, #call, __FILE__, \
                    __LINE__, hgas_last_error());                                                     \
            hgas_abort(1, "hgas-device-bench: an hgas call failed");                                \
        }                                                                                            \
    } while (0)

const size_t k_pingpong_max = 1u << 20;  // as hgas-nvshmem-peer's device ping-pong

int me, peer, gpu_of[2];
int target_rank = 1;  // the rank the puts land on: 1, or 0 itself when the job has one rank
const char *direction = "d2d-peer";
hd::ctx C;
cudaStream_t st;
cudaEvent_t ev0, ev1;
char *dst, *src;                 // symmetric cuda, max bytes each
uint64_t *words;                 // symmetric cuda: [0] put_signal signal, [8] p flag, [16..17] g, [24] fadd, [32] raw flag
unsigned long long *d_bad;       // device counter of wrong values
unsigned char *h_pat, *h_chk;
uint64_t round_sig = 0, round_p = 0, round_raw = 0;
double raw_us = 0, raw_rel_us = 0, p_us = 0, sig8_us = 0;
std::vector<std::pair<size_t, double>> raw_bw, put_bw;  // (bytes, GB/s) for the ratio lines

// 1 on every rank when `ok` is 1 on every rank.
int all_ok(int ok) {
    int64_t v = ok, r = 0;
    HCK(hgas_allreduce(&r, &v, 1, HGAS_INT64, HGAS_OP_MIN));
    return (int)r;
}

double event_ms() {
    float ms = 0;
    CK(cudaEventSynchronize(ev1));  // bounded: the kernels' waits give up after HGAS_TIMEOUT
    CK(cudaEventElapsedTime(&ms, ev0, ev1));
    return (double)ms;
}

// Waits for the stream (bounded) and fails on any device-side error.
void sync() { HCK(hgas_stream_sync(st)); }

// With the proxy forced the path says so: its records are another line of the plots and
// ratio table, not the direct path's points overwritten.
gpu_point point(const char *bench, const char *path, const char *timing, bool device) {
    static std::deque<std::string> names;
    if (g_transport == "proxy") {
        names.push_back(std::string(path) + " via the proxy");
        path = names.back().c_str();
    }
    return gpu_point{bench, "hgas", path, direction, NULL, timing, gpu_of[0], gpu_of[1], NULL, device ? "device" : "host"};
}

// ---- kernels ------------------------------------------------------------------------------

__global__ void k_pingpong_signal(hd::ctx c, char *d, const char *s, size_t n, uint64_t *sig, uint64_t base, int iters,
                                  int me, int peer) {
    for (int i = 1; i <= iters; ++i) {
        const uint64_t v = base + (uint64_t)i;
        if (me == 0) {
            hd::put_signal_nbi(c, d, s, n, sig, v, HGAS_SIGNAL_SET, peer);
            hd::signal_wait_until(c, sig, HGAS_CMP_GE, v);
        } else {
            hd::signal_wait_until(c, sig, HGAS_CMP_GE, v);
            hd::put_signal_nbi(c, d, s, n, sig, v, HGAS_SIGNAL_SET, peer);
        }
    }
    hd::quiet(c);
}

__global__ void k_pingpong_p(hd::ctx c, uint64_t *flag, uint64_t base, int iters, int me, int peer) {
    for (int i = 1; i <= iters; ++i) {
        const uint64_t v = base + (uint64_t)i;
        if (me == 0) {
            hd::p(c, flag, v, peer);
            hd::signal_wait_until(c, flag, HGAS_CMP_GE, v);
        } else {
            hd::signal_wait_until(c, flag, HGAS_CMP_GE, v);
            hd::p(c, flag, v, peer);
        }
    }
    hd::quiet(c);
}

// The raw limit: the same ping-pong with plain volatile stores into the peer's word and a
// volatile spin on our own (no fences: a flag carries no data). The peer pointer is the one
// hgas mapped (the context's table), so with no mapping there is no raw number.
// Release: the floor of any correct put_signal -- 8 data bytes stored into the word after the
// flag, the flag stored with st.release.sys (one MEMBAR.ALL.SYS), the wait confirmed with an
// acquire load; what hgas adds on top of it is the API's own cost.
template <bool Release>
__global__ void k_pingpong_raw(volatile uint64_t *mine, volatile uint64_t *theirs, uint64_t base, int iters, int me,
                               uint64_t timeout_ns, unsigned long long *bad) {
    const uint64_t t0 = hgas::detail::now_ns();
    auto send = [&](uint64_t v) {
        if (Release) {
            theirs[1] = v;  // the "data"
            hgas::detail::st_release_sys(const_cast<uint64_t *>(theirs), v);
        } else {
            *theirs = v;
        }
    };
    for (int i = 1; i <= iters; ++i) {
        const uint64_t v = base + (uint64_t)i;
        if (me == 0) send(v);
        for (unsigned polls = 1; *mine < v; ++polls)
            if ((polls & 1023) == 0 && hgas::detail::now_ns() - t0 > timeout_ns) {
                atomicAdd(bad, 1ull);
                return;
            }
        if (Release && (hgas::detail::ld_acquire_sys(const_cast<uint64_t *>(mine)) < v || mine[1] < v)) atomicAdd(bad, 1ull);
        if (me == 1) send(v);
    }
}

// words[0] and words[1] both hold `expect`: the index of the next read depends on the last.
__global__ void k_g(hd::ctx c, const uint64_t *w, int iters, int peer, uint64_t expect, unsigned long long *bad) {
    unsigned long long nbad = 0;
    int idx = 0;
    for (int i = 0; i < iters; ++i) {
        const uint64_t v = hd::g(c, w + idx, peer);
        nbad += v != expect;
        idx = (int)((v ^ expect) & 1u);
    }
    *bad += nbad;
}

__global__ void k_fadd(hd::ctx c, unsigned long long *w, int iters, int peer, unsigned long long *sink) {
    unsigned long long acc = 0, add = 1;
    for (int i = 0; i < iters; ++i) {
        const unsigned long long old = hd::atomic_fetch_add(c, w, add, peer);
        acc += old;
        add = 1 + (old >> 63);  // always 1, but the next add now waits for this answer
    }
    *sink += acc & 1;
}

__global__ void k_put_block(hd::ctx c, char *d, const char *s, size_t n, int iters, int peer) {
    const size_t nb = gridDim.x;
    const size_t chunk = (n / nb) & ~(size_t)15;
    const size_t off = (size_t)blockIdx.x * chunk;
    const size_t len = blockIdx.x == nb - 1 ? n - off : chunk;
    for (int i = 0; i < iters; ++i) hd::put<hd::scope::block>(c, d + off, s + off, len, peer);
    hd::quiet<hd::scope::block>(c);
}

// The SM-store peak for the grid of k_put_block: the same split, plain 16-byte loads and
// stores (four in flight per thread) straight into the peer's memory, no API in between.
__global__ void k_store_raw(char *d, const char *s, size_t n, int iters) {
    const size_t nb = gridDim.x;
    const size_t chunk = (n / nb) & ~(size_t)15;
    const size_t off = (size_t)blockIdx.x * chunk;
    const size_t len = blockIdx.x == nb - 1 ? n - off : chunk;
    uint4 *vd = reinterpret_cast<uint4 *>(d + off);
    const uint4 *vs = reinterpret_cast<const uint4 *>(s + off);
    const size_t nv = len / 16, g = blockDim.x;
    for (int it = 0; it < iters; ++it) {
        size_t i = threadIdx.x;
        for (; i + 3 * g < nv; i += 4 * g) {
            const uint4 a = vs[i], b = vs[i + g], c = vs[i + 2 * g], e = vs[i + 3 * g];
            vd[i] = a;
            vd[i + g] = b;
            vd[i + 2 * g] = c;
            vd[i + 3 * g] = e;
        }
        for (; i < nv; i += g) vd[i] = vs[i];
        for (size_t j = nv * 16 + threadIdx.x; j < len; j += g) d[off + j] = s[off + j];
        __syncthreads();
    }
    __threadfence_system();
}

// ---- measurements -------------------------------------------------------------------------

void prepare(size_t s, unsigned round) {
    bench_fill(h_pat, s, round);
    CK(cudaMemcpy(src, h_pat, s, cudaMemcpyHostToDevice));
    CK(cudaMemset(dst, 0xEE, s));
    CK(cudaStreamSynchronize(nullptr));  // not the device: a stuck stream must not hang the rest
}

int check_dst(size_t s, const char *what) {
    CK(cudaMemcpy(h_chk, dst, s, cudaMemcpyDeviceToHost));
    return gpu_verify(h_chk, h_pat, s, what);
}

void launch_pingpong_signal(size_t s, int iters) {
    k_pingpong_signal<<<1, 1, 0, st>>>(C, dst, src, s, &words[0], round_sig, iters, me, peer);
    CK_LAUNCH();
    round_sig += (uint64_t)iters;
}

void dev_put_signal(const gpu_opts &o, size_t s) {
    prepare(s, 3);
    HCK(hgas_barrier());
    launch_pingpong_signal(s, 1);
    sync();
    HCK(hgas_barrier());
    const int ok = all_ok(check_dst(s, "device put_signal_nbi ping-pong"));
    std::vector<double> v((size_t)o.batches);
    const long it = gpu_lat_iters(o, s);
    launch_pingpong_signal(s, (int)(it / 10 + 1));
    sync();
    for (int b = 0; b < o.batches; ++b) {
        HCK(hgas_barrier_on_stream(st));
        CK(cudaEventRecord(ev0, st));
        launch_pingpong_signal(s, (int)it);
        CK(cudaEventRecord(ev1, st));
        sync();
        v[(size_t)b] = event_ms() * 1e3 / (2.0 * (double)it);
    }
    if (me == 0) {
        gpu_report_lat(o, point("put_signal_lat", "hgas::device::put_signal_nbi (device, 1 thread)", "pingpong/2", true),
                       s, v.data(), o.batches, it, ok);
        if (s == 8) sig8_us = bench_median(v.data(), o.batches);
    }
    HCK(hgas_barrier());
}

void dev_p(const gpu_opts &o) {
    HCK(hgas_barrier());
    std::vector<double> v((size_t)o.batches);
    const long it = gpu_lat_iters(o, 8);
    k_pingpong_p<<<1, 1, 0, st>>>(C, &words[8], round_p, (int)(it / 10 + 1), me, peer);
    CK_LAUNCH();
    round_p += (uint64_t)(it / 10 + 1);
    sync();
    for (int b = 0; b < o.batches; ++b) {
        HCK(hgas_barrier_on_stream(st));
        CK(cudaEventRecord(ev0, st));
        k_pingpong_p<<<1, 1, 0, st>>>(C, &words[8], round_p, (int)it, me, peer);
        CK_LAUNCH();
        round_p += (uint64_t)it;
        CK(cudaEventRecord(ev1, st));
        sync();
        v[(size_t)b] = event_ms() * 1e3 / (2.0 * (double)it);
    }
    uint64_t last = 0;
    CK(cudaMemcpy(&last, &words[8], sizeof last, cudaMemcpyDeviceToHost));
    const int mine = last == round_p;
    if (!mine)
        fprintf(stderr, "%s: rank %d: DATA CHECK FAILED: p ping-pong flag is %llu, expected %llu\n", g_prog, me,
                (unsigned long long)last, (unsigned long long)round_p);
    const int ok = all_ok(mine);
    if (me == 0) {
        gpu_report_lat(o, point("put_lat", "hgas::device::p+signal_wait_until (device, 1 thread)", "pingpong/2", true),
                       8, v.data(), o.batches, it, ok);
        p_us = bench_median(v.data(), o.batches);
    }
    HCK(hgas_barrier());
}

template <bool Release>
void raw(const gpu_opts &o) {
    // The peer's flag as hgas mapped it for this GPU (host-side copy of the context's table).
    char *peer_base = nullptr;
    CK(cudaMemcpy(&peer_base, C.win[0].peer + peer, sizeof peer_base, cudaMemcpyDeviceToHost));
    const int mapped = all_ok(peer_base != nullptr && !(C.flags & HGAS_DEVICE_FORCE_PROXY));
    if (!mapped) {
        if (me == 0) gpu_skip("raw flag ping-pong", "the peer's GPU memory is not mapped here (or the proxy is forced)");
        return;
    }
    volatile uint64_t *theirs =
        reinterpret_cast<volatile uint64_t *>(peer_base + (reinterpret_cast<char *>(&words[32]) - C.win[0].base));
    CK(cudaMemset(d_bad, 0, sizeof *d_bad));
    HCK(hgas_barrier());
    std::vector<double> v((size_t)o.batches);
    const long it = gpu_lat_iters(o, 8);
    k_pingpong_raw<Release><<<1, 1, 0, st>>>(&words[32], theirs, round_raw, (int)(it / 10 + 1), me, C.timeout_ns, d_bad);
    CK_LAUNCH();
    round_raw += (uint64_t)(it / 10 + 1);
    sync();
    for (int b = 0; b < o.batches; ++b) {
        HCK(hgas_barrier_on_stream(st));
        CK(cudaEventRecord(ev0, st));
        k_pingpong_raw<Release><<<1, 1, 0, st>>>(&words[32], theirs, round_raw, (int)it, me, C.timeout_ns, d_bad);
        CK_LAUNCH();
        round_raw += (uint64_t)it;
        CK(cudaEventRecord(ev1, st));
        sync();
        v[(size_t)b] = event_ms() * 1e3 / (2.0 * (double)it);
    }
    unsigned long long bad = 0;
    CK(cudaMemcpy(&bad, d_bad, sizeof bad, cudaMemcpyDeviceToHost));
    const int ok = all_ok(bad == 0);
    if (me == 0) {
        gpu_point pt{Release ? "raw_release_lat" : "raw_flag_lat", "cuda",
                     Release ? "8 B store + st.release.sys flag + acquire, peer memory (raw limit)"
                             : "volatile store + spin, peer memory (raw limit)",
                     direction, NULL, "pingpong/2", gpu_of[0], gpu_of[1], NULL, "device"};
        gpu_report_lat(o, pt, 8, v.data(), o.batches, it, ok);
        (Release ? raw_rel_us : raw_us) = bench_median(v.data(), o.batches);
    }
    HCK(hgas_barrier());
}

void dev_g(const gpu_opts &o) {
    const uint64_t expect = 0x5ca1ab1e0ddba11ull;
    if (me == target_rank) {
        uint64_t w[2] = {expect, expect};
        CK(cudaMemcpy(&words[16], w, sizeof w, cudaMemcpyHostToDevice));
    }
    CK(cudaMemset(d_bad, 0, sizeof *d_bad));
    CK(cudaStreamSynchronize(nullptr));  // not the device: a stuck stream must not hang the rest
    HCK(hgas_barrier());
    if (me == 0) {
        std::vector<double> v((size_t)o.batches);
        const long it = gpu_lat_iters(o, 8);
        k_g<<<1, 1, 0, st>>>(C, &words[16], (int)(it / 10 + 1), peer, expect, d_bad);
        CK_LAUNCH();
        for (int b = 0; b < o.batches; ++b) {
            CK(cudaEventRecord(ev0, st));
            k_g<<<1, 1, 0, st>>>(C, &words[16], (int)it, peer, expect, d_bad);
            CK_LAUNCH();
            CK(cudaEventRecord(ev1, st));
            sync();
            v[(size_t)b] = event_ms() * 1e3 / (double)it;
        }
        unsigned long long bad = 0;
        CK(cudaMemcpy(&bad, d_bad, sizeof bad, cudaMemcpyDeviceToHost));
        if (bad) fprintf(stderr, "%s: rank 0: DATA CHECK FAILED: %llu g reads returned a wrong value\n", g_prog, bad);
        gpu_report_lat(o, point("get_lat", "hgas::device::g (device, 1 thread)", "device-loop", true), 8, v.data(),
                       o.batches, it, bad == 0);
    }
    HCK(hgas_barrier());
}

void dev_fadd(const gpu_opts &o) {
    CK(cudaMemset(&words[24], 0, 8));
    CK(cudaStreamSynchronize(nullptr));  // not the device: a stuck stream must not hang the rest
    HCK(hgas_barrier());
    long total = 0;
    const long it = gpu_lat_iters(o, 8);
    std::vector<double> v((size_t)o.batches);
    if (me == 0) {
        k_fadd<<<1, 1, 0, st>>>(C, reinterpret_cast<unsigned long long *>(&words[24]), (int)(it / 10 + 1), peer, d_bad);
        CK_LAUNCH();
        total += it / 10 + 1;
        for (int b = 0; b < o.batches; ++b) {
            CK(cudaEventRecord(ev0, st));
            k_fadd<<<1, 1, 0, st>>>(C, reinterpret_cast<unsigned long long *>(&words[24]), (int)it, peer, d_bad);
            CK_LAUNCH();
            total += it;
            CK(cudaEventRecord(ev1, st));
            sync();
            v[(size_t)b] = event_ms() * 1e3 / (double)it;
        }
    }
    HCK(hgas_barrier());
    int64_t want = total, all = 0;
    HCK(hgas_allreduce(&all, &want, 1, HGAS_INT64, HGAS_OP_MAX));
    uint64_t got = 0;
    CK(cudaMemcpy(&got, &words[24], 8, cudaMemcpyDeviceToHost));
    const int mine = me != target_rank || got == (uint64_t)all;
    if (!mine)
        fprintf(stderr, "%s: rank %d: DATA CHECK FAILED: the counter is %llu after %lld fetch_adds\n", g_prog, me,
                (unsigned long long)got, (long long)all);
    const int ok = all_ok(mine);
    if (me == 0)
        gpu_report_lat(o, point("fadd_lat", "hgas::device::atomic_fetch_add (device, 1 thread)", "device-loop", true), 8,
                       v.data(), o.batches, it, ok);
    HCK(hgas_barrier());
}

int block_count(size_t s) {
    size_t nb = s / (64u << 10);
    return (int)(nb < 1 ? 1 : nb > 32 ? 32 : nb);
}

void dev_put_block(const gpu_opts &o, size_t s) {
    prepare(s, 5);
    HCK(hgas_barrier());
    const int nb = block_count(s);
    if (me == 0) {
        k_put_block<<<nb, 512, 0, st>>>(C, dst, src, s, 1, peer);
        CK_LAUNCH();
        sync();
    }
    HCK(hgas_barrier());
    const int ok = all_ok(me == target_rank ? check_dst(s, "device put<block>") : 1);
    if (me == 0) {
        std::vector<double> v((size_t)o.batches);
        const long n = gpu_bw_ops(o, s);
        k_put_block<<<nb, 512, 0, st>>>(C, dst, src, s, (int)(n / 10 + 1), peer);
        CK_LAUNCH();
        for (int b = 0; b < o.batches; ++b) {
            CK(cudaEventRecord(ev0, st));
            k_put_block<<<nb, 512, 0, st>>>(C, dst, src, s, (int)n, peer);
            CK_LAUNCH();
            CK(cudaEventRecord(ev1, st));
            sync();
            v[(size_t)b] = event_ms() / 1e3;
        }
        char note[32];
        snprintf(note, sizeof note, "%d block%s of 512 threads", nb, nb == 1 ? "" : "s");
        gpu_point pt = point("put_bw", "hgas::device::put<block> (device, up to 32 blocks)", "device-loop", true);
        pt.note = note;
        gpu_report_bw(o, pt, s, v.data(), o.batches, n, (double)n * (double)s, ok);
        put_bw.emplace_back(s, (double)n * (double)s / bench_median(v.data(), o.batches) / 1e9);
    }
    HCK(hgas_barrier());
}

void raw_store(const gpu_opts &o, size_t s) {
    char *peer_base = nullptr;
    CK(cudaMemcpy(&peer_base, C.win[0].peer + peer, sizeof peer_base, cudaMemcpyDeviceToHost));
    if (!all_ok(peer_base != nullptr)) {
        if (me == 0 && s == o.min_size) gpu_skip("raw store bandwidth", "the peer's GPU memory is not mapped here");
        return;
    }
    char *theirs = peer_base + (dst - C.win[0].base);
    prepare(s, 9);
    HCK(hgas_barrier());
    const int nb = block_count(s);
    if (me == 0) {
        k_store_raw<<<nb, 512, 0, st>>>(theirs, src, s, 1);
        CK_LAUNCH();
        sync();
    }
    HCK(hgas_barrier());
    const int ok = all_ok(me == target_rank ? check_dst(s, "raw peer stores") : 1);
    if (me == 0) {
        std::vector<double> v((size_t)o.batches);
        const long n = gpu_bw_ops(o, s);
        k_store_raw<<<nb, 512, 0, st>>>(theirs, src, s, (int)(n / 10 + 1));
        CK_LAUNCH();
        for (int b = 0; b < o.batches; ++b) {
            CK(cudaEventRecord(ev0, st));
            k_store_raw<<<nb, 512, 0, st>>>(theirs, src, s, (int)n);
            CK_LAUNCH();
            CK(cudaEventRecord(ev1, st));
            sync();
            v[(size_t)b] = event_ms() / 1e3;
        }
        gpu_point pt{"put_bw", "cuda", "plain 16-byte stores into peer memory, same grid (SM-store peak)", direction,
                     NULL, "device-loop", gpu_of[0], gpu_of[1], NULL, "device"};
        gpu_report_bw(o, pt, s, v.data(), o.batches, n, (double)n * (double)s, ok);
        raw_bw.emplace_back(s, (double)n * (double)s / bench_median(v.data(), o.batches) / 1e9);
    }
    HCK(hgas_barrier());
}

void stream_put(const gpu_opts &o, size_t s) {
    prepare(s, 7);
    HCK(hgas_barrier());
    if (me == 0) {
        HCK(hgas_put_on_stream(dst, src, s, peer, st));
        HCK(hgas_quiet_on_stream(st));
        sync();
    }
    HCK(hgas_barrier());
    const int ok = all_ok(me == target_rank ? check_dst(s, "hgas_put_on_stream") : 1);
    if (me == 0) {
        std::vector<double> v((size_t)o.batches);
        const long n = gpu_bw_ops(o, s);
        for (long i = 0; i < n / 10 + 1; ++i) HCK(hgas_put_on_stream(dst, src, s, peer, st));
        HCK(hgas_quiet_on_stream(st));
        sync();
        for (int b = 0; b < o.batches; ++b) {
            const double t0 = gpu_now_s();
            for (long i = 0; i < n; ++i) HCK(hgas_put_on_stream(dst, src, s, peer, st));
            HCK(hgas_quiet_on_stream(st));
            sync();
            v[(size_t)b] = gpu_now_s() - t0;
        }
        gpu_report_bw(o, point("put_bw", "hgas_put_on_stream xN+quiet_on_stream", "window", false), s, v.data(),
                      o.batches, n, (double)n * (double)s, ok);
    }
    HCK(hgas_barrier());
}

}  // namespace

int main(int argc, char **argv) {
    g_prog = "hgas-device-bench";
    gpu_safe_env();
    gpu_opts o;
    gpu_parse(
        argc, argv, &o,
        "measurements (--only): dev_put_signal dev_p dev_g dev_fadd dev_put_block stream_put raw raw_store\n"
        "Run under hgasrun -n 2 (or -n 1: into its own heap); rank r uses hgas_device_gpu(); --devices is not used.\n");
    const int ndev = gpu_count_or_die();  // before hgas_init: without a GPU, a clear exit 1
    char heap[64];
    snprintf(heap, sizeof heap, "%zuM", 2 * (o.max_size >> 20) + 64);
    gpu_default_env("HGAS_CUDA_HEAP_SIZE", heap);
    if (hgas_init() != HGAS_OK) {
        fprintf(stderr, "%s: FAILED: hgas_init: %s\n", g_prog, hgas_last_error());
        return 1;
    }
    me = hgas_rank_me();
    g_rank = me;
    const int nranks = hgas_rank_n();
    if (nranks != 1 && nranks != 2) {
        if (me == 0)
            fprintf(stderr, "%s: run with 2 ranks (or 1: it puts into its own heap), not %d\n", g_prog, nranks);
        hgas_finalize();
        return 2;
    }
    // One rank puts into its own heap: the setup of hgas-nvshmem-peer on a machine with one GPU
    // (one PE), so that the two programs' records compare like with like there.
    target_rank = nranks == 1 ? 0 : 1;
    peer = nranks == 1 ? 0 : 1 - me;
    gpu_pin(o, me);
    if (!hgas_kind_available(HGAS_KIND_CUDA)) gpu_die("kind cuda is not available on this rank");
    const int dev = hgas_device_gpu();
    CK(cudaSetDevice(dev));
    int64_t devs[2] = {0, 0}, all[2] = {0, 0};
    devs[me] = dev;
    HCK(hgas_allreduce(all, devs, 2, HGAS_INT64, HGAS_OP_SUM));
    gpu_of[0] = (int)all[0];
    gpu_of[1] = nranks == 1 ? gpu_of[0] : (int)all[1];
    if (gpu_of[0] == gpu_of[1]) direction = "d2d";
    g_device_name = gpu_device_name(dev);
    g_transport = o.transport;
    HCK(hgas_device_ctx_get(&C));
    if ((C.flags & HGAS_DEVICE_FORCE_PROXY) && g_transport == "gpu") g_transport = "proxy";

    HCK(hgas_malloc_kind(o.max_size, HGAS_KIND_CUDA, (void **)&dst));
    HCK(hgas_malloc_kind(o.max_size, HGAS_KIND_CUDA, (void **)&src));
    HCK(hgas_malloc_kind(64 * sizeof(uint64_t), HGAS_KIND_CUDA, (void **)&words));
    CK(cudaMalloc((void **)&d_bad, sizeof *d_bad));
    CK(cudaMemset(d_bad, 0, sizeof *d_bad));
    CK(cudaMallocHost((void **)&h_pat, o.max_size));
    CK(cudaMallocHost((void **)&h_chk, o.max_size));
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    CK(cudaEventCreate(&ev0));
    CK(cudaEventCreate(&ev1));
    HCK(hgas_barrier());
    if (me == 0) {
        char who[96];
        if (nranks == 1)
            snprintf(who, sizeof who, "one rank on GPU %d (%s), into its own heap", gpu_of[0], g_device_name.c_str());
        else
            snprintf(who, sizeof who, "rank 0 on GPU %d (%s), rank 1 on GPU %d", gpu_of[0], g_device_name.c_str(),
                     gpu_of[1]);
        printf("# hgas-device-bench: %s; %d GPU(s) visible; proxy %s; sizes %zu..%zu x%u; median of %d batches\n", who,
               ndev, (C.flags & HGAS_DEVICE_FORCE_PROXY) ? "forced" : "auto", o.min_size, o.max_size, o.factor,
               o.batches);
        fflush(stdout);
    }
    const auto sizes = gpu_sizes(o);
    // Two processes' kernels on one GPU take turns (time slices of milliseconds, without MPS):
    // a ping-pong between them measures the scheduler, and takes minutes.
    const bool pingpong = gpu_of[0] != gpu_of[1];
    if (!pingpong && me == 0)
        gpu_skip("ping-pongs (raw, dev_p, dev_put_signal)", "both ranks are on one GPU, whose kernels of two processes "
                 "run in turns; run with two GPUs");
    if (pingpong && gpu_selected(o, "raw")) {
        raw<false>(o);
        raw<true>(o);
    }
    if (pingpong && gpu_selected(o, "dev_p")) dev_p(o);
    if (pingpong && gpu_selected(o, "dev_put_signal"))
        for (size_t s : sizes)
            if (s <= k_pingpong_max) dev_put_signal(o, s);
    if (gpu_selected(o, "dev_g")) dev_g(o);
    if (gpu_selected(o, "dev_fadd")) dev_fadd(o);
    if (gpu_selected(o, "dev_put_block"))
        for (size_t s : sizes) dev_put_block(o, s);
    if (gpu_selected(o, "raw_store") && !(C.flags & HGAS_DEVICE_FORCE_PROXY))
        for (size_t s : sizes) raw_store(o, s);
    if (gpu_selected(o, "stream_put"))
        for (size_t s : sizes) stream_put(o, s);

    if (me == 0 && raw_us > 0) {
        printf("# ratios to the raw limit (flag ping-pong through peer memory, %.3f us one way):\n", raw_us);
        if (p_us > 0) printf("#   hgas::device::p ping-pong            %8.3f us  x%.2f\n", p_us, p_us / raw_us);
        if (sig8_us > 0) printf("#   hgas::device::put_signal 8 B ping-pong %8.3f us  x%.2f\n", sig8_us, sig8_us / raw_us);
        if (raw_rel_us > 0)
            printf("#   raw 8 B + release flag (put_signal's floor) %8.3f us  x%.2f; hgas put_signal x%.2f of it\n",
                   raw_rel_us, raw_rel_us / raw_us, sig8_us > 0 ? sig8_us / raw_rel_us : 0.0);
        fflush(stdout);
    }
    if (me == 0 && !raw_bw.empty() && !put_bw.empty()) {
        printf("# put<block> against the SM-store peak (same grid):\n");
        for (const auto &r : raw_bw)
            for (const auto &h : put_bw)
                if (h.first == r.first)
                    printf("#   %10zu B  hgas %8.1f GB/s  raw %8.1f GB/s  x%.3f\n", r.first, h.second, r.second,
                           h.second / r.second);
        fflush(stdout);
    }
    HCK(hgas_barrier());
    CK(cudaEventDestroy(ev0));
    CK(cudaEventDestroy(ev1));
    CK(cudaStreamDestroy(st));
    CK(cudaFreeHost(h_pat));
    CK(cudaFreeHost(h_chk));
    CK(cudaFree(d_bad));
    HCK(hgas_free(words));
    HCK(hgas_free(src));
    HCK(hgas_free(dst));
    if (hgas_finalize() != HGAS_OK) {
        fprintf(stderr, "%s: rank %d: FAILED: hgas_finalize: %s\n", g_prog, me, hgas_last_error());
        return 1;
    }
    if (g_check_failed) fprintf(stderr, "%s: rank %d: FAILED: a data check failed (see above)\n", g_prog, me);
    return g_check_failed ? 1 : 0;
}
