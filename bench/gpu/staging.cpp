/* hgas-gpu-staging — GPU-to-GPU transfer written by a user on top of hgas's host API, the way
 * seed 002's Figure 1 does it in UPC ("user-level"): the baseline that hgas's own staging path
 * (device memory in the global address space, moved through host memory) must beat.
 *
 *   build/tools/hgasrun/hgasrun -n 2 build/bench/gpu/hgas-gpu-staging [options]
 *
 * Rank r uses GPU (local rank % GPUs visible); with one GPU both ranks share it. Rank 0's
 * device buffer goes to rank 1's device buffer through two symmetric host buffers from
 * hgas_malloc (send_tmp, recv_tmp), one transfer being:
 *
 *   barrier  (Figure 1)  rank 0: cudaMemcpy D2H device -> send_tmp; hgas_barrier;
 *                                hgas_put(recv_tmp@1, send_tmp); hgas_barrier
 *                        rank 1: hgas_barrier; hgas_barrier; cudaMemcpy H2D recv_tmp -> device
 *   signal   (point to point, what the paper suggests instead of barriers)
 *                        rank 0: cudaMemcpy D2H; wait credit >= i-1 (recv_tmp free);
 *                                hgas_put_signal(recv_tmp@1, send_tmp, sig@1 := i)
 *                        rank 1: wait sig >= i; cudaMemcpy H2D; hgas_put(credit@0 := i)
 *
 * each with the host buffers as hgas allocates them (pageable to CUDA) and registered with
 * cudaHostRegister (pinned). A batch is a loop of transfers; it ends when rank 1's last H2D
 * copy is done (a final barrier, or the last credit), so the time per transfer includes both
 * copies and the synchronisation, as in the paper's loop. Records: put_lat (time per transfer,
 * timing "blocking") and put_bw (bytes per second of the same batches), direction d2d-peer.
 * The data is checked before timing: rank 1 compares its device buffer with the pattern. */
#include "gpu_common.h"

#include <hgas/hgas.h>

namespace {

#define HCK(call)                                                                                    \
    do {                                                                                             \
        hgas_status_t hck_s_ = (call);                                                               \
        if (hck_s_ != HGAS_OK) {                                                                     \
            fprintf(stderr, "%s: rank %d: FAILED: %s at %s:%d: %s\n", g_prog, g_rank, #call, __FILE__, \
                    __LINE__, hgas_last_error());                                                     \
            hgas_abort(1, "hgas-gpu-staging: an hgas call failed");                                 \
        }                                                                                            \
    } while (0)

int me;
unsigned char *send_tmp, *recv_tmp; /* symmetric host buffers */
uint64_t *words;                    /* symmetric: [0] data signal (rank 1), [8] credit (rank 0) */
unsigned char *dbuf;                /* device buffer */
unsigned char *h_pat, *h_chk;
hgas_gptr_t g_recv, g_sig, g_credit;
uint64_t sig_seq = 0;               /* signal-protocol transfers so far, the same on both ranks */
int gpu_of[2];

enum protocol { BARRIER, SIGNAL };

void transfer_barrier(size_t s) {
    if (me == 0) {
        CK(cudaMemcpy(send_tmp, dbuf, s, cudaMemcpyDeviceToHost));
        HCK(hgas_barrier());
        HCK(hgas_put(g_recv, send_tmp, s));
        HCK(hgas_barrier());
    } else {
        HCK(hgas_barrier());
        HCK(hgas_barrier());
        CK(cudaMemcpy(dbuf, recv_tmp, s, cudaMemcpyHostToDevice));
    }
}

void transfer_signal(size_t s) {
    const uint64_t i = ++sig_seq;
    if (me == 0) {
        CK(cudaMemcpy(send_tmp, dbuf, s, cudaMemcpyDeviceToHost));
        HCK(hgas_signal_wait_until(&words[8], HGAS_CMP_GE, i - 1, NULL));
        HCK(hgas_put_signal(g_recv, send_tmp, s, g_sig, i, HGAS_SIGNAL_SET));
    } else {
        HCK(hgas_signal_wait_until(&words[0], HGAS_CMP_GE, i, NULL));
        CK(cudaMemcpy(dbuf, recv_tmp, s, cudaMemcpyHostToDevice));
        HCK(hgas_put(g_credit, &i, sizeof i));
    }
}

/* `n` transfers, ending when rank 1's last copy is done. */
void run(protocol p, size_t s, long n) {
    for (long k = 0; k < n; ++k) p == BARRIER ? transfer_barrier(s) : transfer_signal(s);
    if (p == BARRIER) HCK(hgas_barrier());
    else if (me == 0) HCK(hgas_signal_wait_until(&words[8], HGAS_CMP_GE, sig_seq, NULL));
}

/* --only names protocols and host-buffer kinds; a family not named is not filtered. */
bool pick(const gpu_opts &o, const char *name, const char *a, const char *b) {
    if (o.only.empty()) return true;
    return !(gpu_selected(o, a) || gpu_selected(o, b)) || gpu_selected(o, name);
}

/* 1 if CUDA knows `p` as page-locked host memory (registered or cudaMallocHost). */
int is_pinned(const void *p) {
    cudaPointerAttributes a;
    if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return a.type == cudaMemoryTypeHost;
}

int all_ok(int ok) {
    int64_t v = ok ? 1 : 0, r = 0;
    HCK(hgas_allreduce(&r, &v, 1, HGAS_INT64, HGAS_OP_MIN));
    return r == 1;
}

void measure(const gpu_opts &o, protocol p, const char *host_mem, size_t s) {
    /* Check: the pattern from rank 0's device buffer into rank 1's poisoned one. */
    bench_fill(h_pat, s, 1);
    if (me == 0) CK(cudaMemcpy(dbuf, h_pat, s, cudaMemcpyHostToDevice));
    else CK(cudaMemset(dbuf, 0xEE, s));
    CK(cudaDeviceSynchronize());
    HCK(hgas_barrier());
    run(p, s, 1);
    HCK(hgas_barrier());
    int ok = 1;
    if (me == 1) {
        CK(cudaDeviceSynchronize());
        CK(cudaMemcpy(h_chk, dbuf, s, cudaMemcpyDeviceToHost));
        ok = gpu_verify(h_chk, h_pat, s, p == BARRIER ? "staging, barrier protocol" : "staging, signal protocol");
    }
    ok = all_ok(ok);

    const long it = gpu_lat_iters(o, s);
    std::vector<double> lat((size_t)o.batches), bw((size_t)o.batches);
    run(p, s, it / 10 + 1);
    for (int b = 0; b < o.batches; ++b) {
        HCK(hgas_barrier());
        double t0 = gpu_now_s();
        run(p, s, it);
        double t = gpu_now_s() - t0;
        lat[(size_t)b] = t * 1e6 / (double)it;
        bw[(size_t)b] = t;
    }
    if (me == 0) {
        const char *path = p == BARRIER ? "D2H+hgas_put+2 hgas_barrier+H2D (seed 002 Fig. 1)"
                                        : "D2H+hgas_put_signal+credit+H2D";
        gpu_point pt{"put_lat", "user-staging", path, "d2d-peer", host_mem, "blocking", gpu_of[0], gpu_of[1], NULL, "host"};
        gpu_report_lat(o, pt, s, lat.data(), o.batches, it, ok);
        pt.bench = "put_bw";
        gpu_report_bw(o, pt, s, bw.data(), o.batches, it, (double)it * (double)s, ok);
    }
    HCK(hgas_barrier());
}

}  // namespace

int main(int argc, char **argv) {
    g_prog = "hgas-gpu-staging";
    gpu_safe_env();
    gpu_opts o;
    gpu_parse(argc, argv, &o,
              "measurements (--only): barrier signal (protocols), pageable registered (host buffers).\n"
              "Run under hgasrun -n 2; rank r uses GPU (local rank %% GPUs); --devices is not used.\n");
    /* Before hgas_init: without a GPU this rank exits 1 and hgasrun ends the job. */
    const int ndev = gpu_count_or_die();
    char heap[64];
    snprintf(heap, sizeof heap, "%zuM", 2 * (o.max_size >> 20) + 64);
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

    HCK(hgas_align(4096, o.max_size, (void **)&send_tmp));
    HCK(hgas_align(4096, o.max_size, (void **)&recv_tmp));
    HCK(hgas_calloc(16, sizeof(uint64_t), (void **)&words));
    HCK(hgas_ptr(recv_tmp, 1, &g_recv));
    HCK(hgas_ptr(&words[0], 1, &g_sig));
    HCK(hgas_ptr(&words[8], 0, &g_credit));
    memset(send_tmp, 0, o.max_size);
    memset(recv_tmp, 0, o.max_size);
    CK(cudaMalloc((void **)&dbuf, o.max_size));
    CK(cudaMallocHost((void **)&h_pat, o.max_size));
    CK(cudaMallocHost((void **)&h_chk, o.max_size));

    if (me == 0) {
        printf("# hgas-gpu-staging: rank 0 on GPU %d (%s), rank 1 on GPU %d; %d GPU(s) visible; sizes %zu..%zu x%u; "
               "median of %d batches\n",
               gpu_of[0], g_device_name.c_str(), gpu_of[1], ndev, o.min_size, o.max_size, o.factor, o.batches);
        fflush(stdout);
    }
    /* hgas may pin its host heap itself (for its own staging); then "pageable" would be a lie. */
    const int pinned_by_hgas = !all_ok(!is_pinned(send_tmp) || !is_pinned(recv_tmp)) ? 1 : 0;
    const auto sizes = gpu_sizes(o);
    for (int reg = 0; reg < 2; ++reg) {
        const char *host_mem = reg ? "registered" : "pageable";
        if (!pick(o, host_mem, "pageable", "registered")) continue;
        if (pinned_by_hgas && !reg) {
            if (me == 0) gpu_skip("pageable host buffers", "hgas already registered its host heap with CUDA");
            continue;
        }
        if (reg && !pinned_by_hgas) {
            /* Registration is the user's choice; a machine that refuses it loses this variant. */
            cudaError_t e1 = cudaHostRegister(send_tmp, o.max_size, cudaHostRegisterDefault);
            cudaError_t e2 = cudaHostRegister(recv_tmp, o.max_size, cudaHostRegisterDefault);
            const int mine = e1 == cudaSuccess && e2 == cudaSuccess;
            if (!mine)
                fprintf(stderr, "%s: rank %d: cudaHostRegister of the hgas heap buffers: %s / %s\n", g_prog, me,
                        cudaGetErrorString(e1), cudaGetErrorString(e2));
            (void)cudaGetLastError();
            if (!all_ok(mine)) {
                if (e1 == cudaSuccess) CK(cudaHostUnregister(send_tmp));
                if (e2 == cudaSuccess) CK(cudaHostUnregister(recv_tmp));
                if (me == 0) gpu_skip("registered host buffers", "cudaHostRegister refused hgas's heap memory");
                continue;
            }
        }
        for (protocol p : {BARRIER, SIGNAL}) {
            if (!pick(o, p == BARRIER ? "barrier" : "signal", "barrier", "signal")) continue;
            for (size_t s : sizes) measure(o, p, pinned_by_hgas ? "registered (by hgas)" : host_mem, s);
        }
        if (reg && !pinned_by_hgas) {
            CK(cudaHostUnregister(send_tmp));
            CK(cudaHostUnregister(recv_tmp));
        }
    }

    HCK(hgas_barrier());
    CK(cudaFree(dbuf));
    CK(cudaFreeHost(h_pat));
    CK(cudaFreeHost(h_chk));
    HCK(hgas_free(words));
    HCK(hgas_free(recv_tmp));
    HCK(hgas_free(send_tmp));
    const int failed = !all_ok(!g_check_failed);
    if (hgas_finalize() != HGAS_OK) {
        fprintf(stderr, "%s: rank %d: FAILED: hgas_finalize: %s\n", g_prog, me, hgas_last_error());
        return 1;
    }
    if (failed && me == 0) fprintf(stderr, "%s: FAILED: a data check failed (see above)\n", g_prog);
    return failed ? 1 : 0;
}
