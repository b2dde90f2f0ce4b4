/* hgas-bench-msg-gpu — tagged messages between GPU buffers (hgas_send / hgas_recv on cudaMalloc'd
 * memory, any path hgas picks) against what a program would write by hand, run under
 * hgasrun -n 2 (rank r uses GPU local rank % GPUs). One transfer is rank 0's device buffer into
 * rank 1's device buffer followed by a 0-byte answer (so that every method is timed to the
 * moment the data is in device memory at the receiver); records msg_lat (time per transfer)
 * and msg_bw (bytes per second of the same batches), direction d2d-peer:
 *
 *   hgas        hgas_send(dev) / hgas_recv(dev)
 *   copy-send   (a) cudaMemcpy D2H into pinned memory, hgas_send / hgas_recv of host memory,
 *               cudaMemcpy H2D (the GPU-integrated-MPI paper's Figure 1a)
 *   pipelined   (b) the same in chunks of --chunk bytes (default 1 MiB), D2H of chunk k+1 on
 *               one stream while chunk k is sent, H2D of chunk k on a second stream while k+1
 *               arrives (Figure 1b)
 *   device-copy the goal's reference: rank 0 copies its buffer into a second one on rank 1's GPU
 *               (cudaMemcpy D2D on one GPU, cudaMemcpyPeer between two), synchronized; no
 *               message. Printed beside hgas as a ratio of the two bandwidths per size (a
 *               cudaMalloc'd buffer at both ends goes by CUDA IPC when the ranks share a node).
 *
 * and the halo face of a 512 x 512 x 4 float array (x = 0: 262144 floats of 4 bytes, stride
 * 16 bytes; --halo-nz N: N x 512 x 4, a face of N x 2 KiB), records halo_lat:
 *   typed       hgas_send_typed / hgas_recv_typed with a vector layout (hgas packs on the GPU)
 *   cpu-pack    cudaMemcpy of the whole array to the host, pack by the CPU, hgas_send of the
 *               packed bytes, unpack by the CPU into a host copy, cudaMemcpy to the device
 *   pack-kernel a hand-written pack kernel into a contiguous device buffer, hgas_send /
 *               hgas_recv of it, a hand-written unpack kernel
 * Data is checked before timing. */
#include <hgas/hgas.h>

#include <algorithm>
#include <functional>
#include <map>
#include <string>

#include "api/testing_msg.h"
#include "gpu_common.h"

namespace {

#define HCK(call)                                                                                    \
    do {                                                                                             \
        hgas_status_t hck_s_ = (call);                                                               \
        if (hck_s_ != HGAS_OK) {                                                                     \
            fprintf(stderr, "%s: rank %d: FAILED: %s at %s:%d: %s\n", g_prog, g_rank, #call, __FILE__, \
                    __LINE__, hgas_last_error());                                                     \
            hgas_abort(1, "hgas-bench-msg-gpu: an hgas call failed");                               \
        }                                                                                            \
    } while (0)

int me, gpu_of[2];
unsigned char *dsrc, *ddst, *hbuf, *h_pat, *h_chk;
unsigned char *dpeer;  // rank 0's buffer on rank 1's GPU (device-copy)
std::map<std::string, std::map<size_t, double>> median_bw;  // method -> size -> bytes/s (rank 0)
size_t chunk = 1 << 20;
cudaStream_t s_d2h, s_h2d;
std::vector<cudaEvent_t> ev;

enum method { HGAS, COPY_SEND, PIPELINED, DEVICE_COPY };
const char *method_name[] = {"hgas", "copy-send", "pipelined", "device-copy"};
const char *method_path[] = {"hgas_send/hgas_recv of device memory", "(a) D2H + host send/recv + H2D",
                             "(b) chunked D2H/send/recv/H2D on streams",
                             "cudaMemcpy D2D (one GPU) / cudaMemcpyPeer (two), no message"};

void ack() {
    if (me == 0) HCK(hgas_recv(NULL, 0, 1, 2, NULL));
    else HCK(hgas_send(NULL, 0, 0, 2));
}

void transfer(method m, size_t s) {
    if (m == DEVICE_COPY) {
        if (me == 0) {
            CK(cudaMemcpyPeerAsync(dpeer, gpu_of[1], dsrc, gpu_of[0], s, s_d2h));
            CK(cudaStreamSynchronize(s_d2h));
        }
        return;
    }
    if (m == HGAS) {
        if (me == 0) HCK(hgas_send(dsrc, s, 1, 1));
        else HCK(hgas_recv(ddst, s, 0, 1, NULL));
    } else if (m == COPY_SEND) {
        if (me == 0) {
            CK(cudaMemcpy(hbuf, dsrc, s, cudaMemcpyDeviceToHost));
            HCK(hgas_send(hbuf, s, 1, 1));
        } else {
            HCK(hgas_recv(hbuf, s, 0, 1, NULL));
            CK(cudaMemcpy(ddst, hbuf, s, cudaMemcpyHostToDevice));
        }
    } else {
        const size_t n = (s + chunk - 1) / chunk;
        if (me == 0) {
            for (size_t k = 0; k < n; ++k) {
                const size_t off = k * chunk, len = s - off < chunk ? s - off : chunk;
                CK(cudaMemcpyAsync(hbuf + off, dsrc + off, len, cudaMemcpyDeviceToHost, s_d2h));
                CK(cudaEventRecord(ev[k % ev.size()], s_d2h));
                if (k) {
                    const size_t po = (k - 1) * chunk;
                    CK(cudaEventSynchronize(ev[(k - 1) % ev.size()]));
                    HCK(hgas_send(hbuf + po, chunk, 1, 1));
                }
            }
            const size_t po = (n - 1) * chunk;
            CK(cudaEventSynchronize(ev[(n - 1) % ev.size()]));
            HCK(hgas_send(hbuf + po, s - po, 1, 1));
        } else {
            for (size_t k = 0; k < n; ++k) {
                const size_t off = k * chunk, len = s - off < chunk ? s - off : chunk;
                HCK(hgas_recv(hbuf + off, len, 0, 1, NULL));
                CK(cudaMemcpyAsync(ddst + off, hbuf + off, len, cudaMemcpyHostToDevice, s_h2d));
            }
            CK(cudaStreamSynchronize(s_h2d));
        }
    }
    ack();
}

int all_ok(int ok) {
    int64_t v = ok ? 1 : 0, r = 0;
    HCK(hgas_allreduce(&r, &v, 1, HGAS_INT64, HGAS_OP_MIN));
    return r == 1;
}

template <class F>
void timed(const gpu_opts &o, const char *bench, const char *impl, const char *path, size_t s, int ok, F run) {
    const long it = gpu_lat_iters(o, s);
    std::vector<double> lat((size_t)o.batches), bw((size_t)o.batches);
    for (long k = 0; k < it / 10 + 1; ++k) run();
    for (int b = 0; b < o.batches; ++b) {
        HCK(hgas_barrier());
        const double t0 = gpu_now_s();
        for (long k = 0; k < it; ++k) run();
        const double t = gpu_now_s() - t0;
        lat[(size_t)b] = t * 1e6 / (double)it;
        bw[(size_t)b] = t;
    }
    if (me == 0 && !strcmp(bench, "msg_lat")) {
        std::vector<double> sorted(bw);
        std::sort(sorted.begin(), sorted.end());
        median_bw[impl][s] = (double)it * (double)s / sorted[sorted.size() / 2];
    }
    if (me == 0) {
        gpu_point pt{bench, impl, path, "d2d-peer", NULL, "pingpong", gpu_of[0], gpu_of[1], NULL, "host"};
        gpu_report_lat(o, pt, s, lat.data(), o.batches, it, ok);
        if (!strcmp(bench, "msg_lat")) {
            pt.bench = "msg_bw";
            gpu_report_bw(o, pt, s, bw.data(), o.batches, it, (double)it * (double)s, ok);
        }
    }
    HCK(hgas_barrier());
}

void measure(const gpu_opts &o, method m, size_t s) {
    bench_fill(h_pat, s, 3);
    if (me == 0) CK(cudaMemcpy(dsrc, h_pat, s, cudaMemcpyHostToDevice));
    else CK(cudaMemset(ddst, 0xEE, s));
    CK(cudaDeviceSynchronize());
    HCK(hgas_barrier());
    transfer(m, s);
    int ok = 1;
    if (m == DEVICE_COPY) {
        if (me == 0) {
            CK(cudaMemcpy(h_chk, dpeer, s, cudaMemcpyDeviceToHost));
            ok = gpu_verify(h_chk, h_pat, s, method_path[m]);
        }
    } else if (me == 1) {
        CK(cudaMemcpy(h_chk, ddst, s, cudaMemcpyDeviceToHost));
        ok = gpu_verify(h_chk, h_pat, s, method_path[m]);
    }
    ok = all_ok(ok);
    timed(o, "msg_lat", method_name[m], method_path[m], s, ok, [&] { transfer(m, s); });
}

/* ---- the halo face ---------------------------------------------------------------------- */
size_t NZ = 512;  // --halo-nz
constexpr size_t NY = 512, NX = 4;

__global__ void k_pack(float *out, const float *in, size_t n, size_t stride) {
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
        out[i] = in[i * stride];
}
__global__ void k_unpack(float *out, const float *in, size_t n, size_t stride) {
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
        out[i * stride] = in[i];
}

void halo(const gpu_opts &o) {
    const size_t FACE = NZ * NY;  // floats; the x = 0 face
    const size_t whole = NZ * NY * NX * sizeof(float), face = FACE * sizeof(float);
    float *darr = nullptr, *dpack = nullptr, *harr = nullptr, *hpack = nullptr;
    CK(cudaMalloc((void **)&darr, whole));
    CK(cudaMalloc((void **)&dpack, face));
    CK(cudaMallocHost((void **)&harr, whole));
    CK(cudaMallocHost((void **)&hpack, face));
    hgas_layout_t l;
    HCK(hgas_layout_vector(FACE, sizeof(float), NX * sizeof(float), &l));
    auto typed = [&] {
        if (me == 0) HCK(hgas_send_typed(darr, l, 1, 3));
        else HCK(hgas_recv_typed(darr, l, 0, 3, NULL));
        ack();
    };
    auto cpu = [&] {
        if (me == 0) {
            CK(cudaMemcpy(harr, darr, whole, cudaMemcpyDeviceToHost));
            for (size_t i = 0; i < FACE; ++i) hpack[i] = harr[i * NX];
            HCK(hgas_send(hpack, face, 1, 3));
        } else {
            HCK(hgas_recv(hpack, face, 0, 3, NULL));
            CK(cudaMemcpy(harr, darr, whole, cudaMemcpyDeviceToHost));  // the other faces stay as they are
            for (size_t i = 0; i < FACE; ++i) harr[i * NX] = hpack[i];
            CK(cudaMemcpy(darr, harr, whole, cudaMemcpyHostToDevice));
        }
        ack();
    };
    auto kernel = [&] {
        if (me == 0) {
            k_pack<<<256, 256, 0, s_d2h>>>(dpack, darr, FACE, NX);
            CK(cudaStreamSynchronize(s_d2h));
            HCK(hgas_send(dpack, face, 1, 3));
        } else {
            HCK(hgas_recv(dpack, face, 0, 3, NULL));
            k_unpack<<<256, 256, 0, s_h2d>>>(darr, dpack, FACE, NX);
            CK(cudaStreamSynchronize(s_h2d));
        }
        ack();
    };
    struct { const char *impl, *path; std::function<void()> f; } ways[] = {
        {"hgas-typed", "hgas_send_typed/recv_typed, vector layout (GPU pack)", typed},
        {"cpu-pack", "cudaMemcpy array + CPU pack + send/recv + CPU unpack + cudaMemcpy", cpu},
        {"pack-kernel", "hand pack kernel + contiguous send/recv + unpack kernel", kernel},
    };
    for (auto &w : ways) {
        if (!o.only.empty() && !gpu_selected(o, w.impl)) continue;
        // Check: rank 0's array pattern; rank 1's face must equal it, the rest untouched.
        std::vector<float> want(NZ * NY * NX), got(NZ * NY * NX);
        for (size_t i = 0; i < want.size(); ++i) want[i] = me == 0 ? float(i % 9973) : -1.0f;
        CK(cudaMemcpy(darr, want.data(), whole, cudaMemcpyHostToDevice));
        HCK(hgas_barrier());
        w.f();
        int ok = 1;
        if (me == 1) {
            CK(cudaMemcpy(got.data(), darr, whole, cudaMemcpyDeviceToHost));
            for (size_t i = 0; i < got.size() && ok; ++i) {
                const float e = i % NX == 0 ? float(i % 9973) : -1.0f;
                if (got[i] != e) {
                    fprintf(stderr, "%s: halo %s: element %zu is %g, not %g\n", g_prog, w.impl, i, got[i], e);
                    ok = 0;
                }
            }
        }
        ok = all_ok(ok);
        timed(o, "halo_lat", w.impl, w.path, face, ok, w.f);
    }
    hgas_layout_free(l);
    cudaFree(darr);
    cudaFree(dpack);
    cudaFreeHost(harr);
    cudaFreeHost(hpack);
}

}  // namespace

int main(int argc, char **argv) {
    g_prog = "hgas-bench-msg-gpu";
    gpu_safe_env();
    gpu_opts o;
    for (int i = 1; i + 1 < argc;)
        if (!strcmp(argv[i], "--chunk") || !strcmp(argv[i], "--halo-nz")) {
            if (!strcmp(argv[i], "--chunk"))
                chunk = bench_parse_bytes(argv[i + 1]);
            else if ((NZ = strtoull(argv[i + 1], nullptr, 10)) == 0) {
                fprintf(stderr, "%s: --halo-nz %s: give a number of planes, at least 1\n", g_prog, argv[i + 1]);
                return 2;
            }
            for (int j = i; j + 2 <= argc; ++j) argv[j] = argv[j + 2];
            argc -= 2;
        } else {
            ++i;
        }
    gpu_parse(argc, argv, &o,
              "measurements (--only): hgas copy-send pipelined device-copy (device messages), hgas-typed cpu-pack\n"
              "pack-kernel (the halo face). --chunk B: chunk of the pipelined baseline (default 1M). --halo-nz N:\n"
              "planes of the halo's array (default 512: a 1 MiB face).\n"
              "Run under hgasrun -n 2; rank r uses GPU (local rank %% GPUs); --devices is not used.\n");
    const int ndev = gpu_count_or_die();
    char heap[64];
    snprintf(heap, sizeof heap, "%zuM", (o.max_size >> 20) + 64);
    gpu_default_env("HGAS_HEAP_SIZE", heap);
    if (hgas_init() != HGAS_OK) {
        fprintf(stderr, "%s: FAILED: hgas_init: %s\n", g_prog, hgas_last_error());
        return 1;
    }
    me = hgas_rank_me();
    g_rank = me;
    if (hgas_rank_n() != 2) {
        if (me == 0) fprintf(stderr, "%s: run with 2 ranks (hgasrun -n 2), not %d\n", g_prog, hgas_rank_n());
        hgas_finalize();
        return 2;
    }
    gpu_pin(o, me);
    const int dev = hgas_local_rank() % ndev;
    CK(cudaSetDevice(dev));
    int64_t devs[2] = {0, 0}, all[2] = {0, 0};
    devs[me] = dev;
    HCK(hgas_allreduce(all, devs, 2, HGAS_INT64, HGAS_OP_SUM));
    gpu_of[0] = (int)all[0];
    gpu_of[1] = (int)all[1];
    g_device_name = gpu_device_name(dev);
    g_transport = o.transport;
    CK(cudaMalloc((void **)&dsrc, o.max_size));
    CK(cudaMalloc((void **)&ddst, o.max_size));
    CK(cudaMallocHost((void **)&hbuf, o.max_size));
    CK(cudaMallocHost((void **)&h_pat, o.max_size));
    CK(cudaMallocHost((void **)&h_chk, o.max_size));
    CK(cudaStreamCreateWithFlags(&s_d2h, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithFlags(&s_h2d, cudaStreamNonBlocking));
    ev.resize(8);
    for (auto &e : ev) CK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    if (me == 0) {
        // The pinned pool (HGAS_MSG_POOL_*), since the staged path's speed depends on it.
        hgasi_msg_stats_t ms{};
        hgasi_msg_stats(&ms);
        printf(
            "# hgas-bench-msg-gpu: rank 0 on GPU %d (%s), rank 1 on GPU %d; sizes %zu..%zu x%u; chunk %zu (baselines); "
            "hgas pinned pool %llu KiB; median of %d batches\n",
            gpu_of[0], g_device_name.c_str(), gpu_of[1], o.min_size, o.max_size, o.factor, chunk,
            (unsigned long long)(ms.pool_bytes >> 10), o.batches);
        fflush(stdout);
    }
    if (me == 0) {  // the device-copy reference: a buffer on rank 1's GPU, peer access where there is
        if (gpu_of[1] != dev) {
            int can = 0;
            CK(cudaDeviceCanAccessPeer(&can, dev, gpu_of[1]));
            if (can && cudaDeviceEnablePeerAccess(gpu_of[1], 0) != cudaSuccess) cudaGetLastError();
        }
        CK(cudaSetDevice(gpu_of[1]));
        CK(cudaMalloc((void **)&dpeer, o.max_size));
        CK(cudaSetDevice(dev));
    }
    for (method m : {HGAS, COPY_SEND, PIPELINED, DEVICE_COPY}) {
        if (!o.only.empty() && !gpu_selected(o, method_name[m])) continue;
        for (size_t s : gpu_sizes(o)) measure(o, m, s);
    }
    if (me == 0 && median_bw.count("hgas") && median_bw.count("device-copy")) {
        printf("# D->D bandwidth, hgas_send/recv of cudaMalloc'd buffers against the device copy (%s):\n",
               gpu_of[0] == gpu_of[1] ? "cudaMemcpy D2D, one GPU" : "cudaMemcpyPeer, two GPUs");
        for (auto &[sz, h] : median_bw["hgas"]) {
            auto it = median_bw["device-copy"].find(sz);
            if (it == median_bw["device-copy"].end()) continue;
            printf("#   %10zu B: hgas %8.1f GB/s, device copy %8.1f GB/s: %.2fx%s\n", sz, h / 1e9, it->second / 1e9,
                   h / it->second, sz >= (16u << 20) ? " (goal >= 0.95x from 16 MiB)" : "");
        }
        fflush(stdout);
    }
    halo(o);
    for (auto &e : ev) cudaEventDestroy(e);
    cudaFree(dsrc);
    cudaFree(ddst);
    if (dpeer) cudaFree(dpeer);
    HCK(hgas_finalize());
    return g_check_failed ? 1 : 0;
}
