/* hgas-nvshmem-peer — NVSHMEM between two GPUs of one machine, PE 0 -> PE 1: the peer of hgas's
 * GPU-to-GPU puts (host-initiated now, device-initiated for issue 4).
 *
 * Started alone (`hgas-nvshmem-peer [options]`): it starts its second PE itself (spawn.h) and
 * bootstraps NVSHMEM through a unique id (NVSHMEM_BOOTSTRAP=UID, nvshmemx_get_uniqueid on PE 0,
 * passed over a socket, nvshmemx_set_attr_uniqueid_args + nvshmemx_init_attr). PE r uses GPU
 * --devices[r] (default 0,1). NVSHMEM needs one GPU per PE: on a machine with one GPU it runs one
 * PE that puts into its own symmetric memory (direction d2d), host_put and host_put_stream only:
 * NVSHMEM's host path inside one GPU, beside hgas's same-process path.
 *
 * Host-initiated (PE 0 calls, PE 1 waits in a barrier):
 *   host_put         put_lat: nvshmem_putmem + nvshmem_quiet per message (blocking)
 *                    put_bw:  N nvshmem_putmem, then one nvshmem_quiet (window)
 *   host_put_stream  put_bw:  N nvshmemx_putmem_on_stream back to back, then
 *                    nvshmemx_quiet_on_stream + cudaStreamSynchronize (window); median_us is
 *                    the time per operation
 * Device-initiated (kernels; timed with CUDA events, both PEs aligned first by
 * nvshmemx_barrier_all_on_stream), for issue 4:
 *   dev_put_signal   put_signal_lat: ping-pong of nvshmem_putmem_signal_nbi + nvshmem_signal_wait_until,
 *                    one thread on each GPU, one-way time (pingpong/2); messages up to 1 MiB
 *   dev_p            put_lat 8 B: ping-pong of nvshmem_uint64_p + nvshmem_uint64_wait_until, one thread
 *   dev_g            get_lat 8 B: nvshmem_uint64_g of a word of PE 1, one thread, each read
 *                    depending on the last (device-loop)
 *   dev_put_block    put_bw: nvshmemx_putmem_block by up to 32 blocks of 512 threads (64 KiB or
 *                    more each), N times in one kernel, then nvshmem_quiet (device-loop)
 *   dev_fadd         fadd_lat 8 B: nvshmem_uint64_atomic_fetch_add on PE 1's word, one thread, each
 *                    add waiting for the last answer (device-loop)
 * Data checks: the receiving PE compares what arrived (pattern into a poisoned buffer) before the
 * timed batches, and tells PE 0 over the socket. */
#include "gpu_common.h"
#include "spawn.h"

#include <nvshmem.h>
#include <nvshmemx.h>

namespace {

const size_t k_dev_pingpong_max = 1u << 20;

int me, peer, npes = 2;
char *dst, *src;           /* symmetric, max bytes each */
uint64_t *words;           /* symmetric: [0] put_signal signal, [8] p flag, [16..17] g words, [24] fadd */
unsigned long long *d_bad; /* device counter of wrong g values */
unsigned char *h_pat, *h_chk;
cudaStream_t st;
cudaEvent_t ev0, ev1;
uint64_t round_sig = 0, round_p = 0;

__global__ void k_pingpong_signal(char *d, const char *s, size_t n, uint64_t *sig, uint64_t base, int iters, int me,
                                  int peer) {
    for (int i = 1; i <= iters; ++i) {
        const uint64_t v = base + (uint64_t)i;
        if (me == 0) {
            nvshmem_putmem_signal_nbi(d, s, n, sig, v, NVSHMEM_SIGNAL_SET, peer);
            nvshmem_signal_wait_until(sig, NVSHMEM_CMP_GE, v);
        } else {
            nvshmem_signal_wait_until(sig, NVSHMEM_CMP_GE, v);
            nvshmem_putmem_signal_nbi(d, s, n, sig, v, NVSHMEM_SIGNAL_SET, peer);
        }
    }
    nvshmem_quiet();
}

__global__ void k_pingpong_p(uint64_t *flag, uint64_t base, int iters, int me, int peer) {
    for (int i = 1; i <= iters; ++i) {
        const uint64_t v = base + (uint64_t)i;
        if (me == 0) {
            nvshmem_uint64_p(flag, v, peer);
            nvshmem_uint64_wait_until(flag, NVSHMEM_CMP_GE, v);
        } else {
            nvshmem_uint64_wait_until(flag, NVSHMEM_CMP_GE, v);
            nvshmem_uint64_p(flag, v, peer);
        }
    }
    nvshmem_quiet();
}

/* words[0] and words[1] both hold `expect`: the index of the next read depends on the value of
 * the last, so the reads cannot overlap. */
__global__ void k_g(const uint64_t *w, int iters, int peer, uint64_t expect, unsigned long long *bad) {
    unsigned long long nbad = 0;
    int idx = 0;
    for (int i = 0; i < iters; ++i) {
        const uint64_t v = nvshmem_uint64_g(w + idx, peer);
        nbad += v != expect;
        idx = (int)((v ^ expect) & 1u);
    }
    *bad += nbad;
}

__global__ void k_fadd(uint64_t *w, int iters, int peer, unsigned long long *sink) {
    unsigned long long acc = 0;
    uint64_t add = 1;
    for (int i = 0; i < iters; ++i) {
        const uint64_t old = nvshmem_uint64_atomic_fetch_add(w, add, peer);
        acc += old;
        add = 1 + (old >> 63);  // always 1, but the next add now waits for this answer
    }
    *sink += acc & 1;
}

__global__ void k_put_block(char *d, const char *s, size_t n, int iters, int peer) {
    const size_t nb = gridDim.x;
    const size_t chunk = (n / nb) & ~(size_t)15;
    const size_t off = (size_t)blockIdx.x * chunk;
    const size_t len = blockIdx.x == nb - 1 ? n - off : chunk;
    for (int i = 0; i < iters; ++i) nvshmemx_putmem_block(d + off, s + off, len, peer);
    __syncthreads();
    if (threadIdx.x == 0) nvshmem_quiet();
}

/* Pattern into src (both PEs: both send in ping-pongs), poison into dst. */
void prepare(size_t s) {
    bench_fill(h_pat, s, 1);
    CK(cudaMemcpy(src, h_pat, s, cudaMemcpyHostToDevice));
    CK(cudaMemset(dst, 0xEE, s));
    CK(cudaDeviceSynchronize());
}

/* This PE's dst against the pattern. */
int check_dst(size_t s, const char *what) {
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(h_chk, dst, s, cudaMemcpyDeviceToHost));
    return gpu_verify(h_chk, h_pat, s, what);
}

gpu_point point(const char *bench, const char *path, const char *timing, const gpu_opts &o) {
    const bool dev = strstr(path, "(device") != NULL;
    return gpu_point{bench, "nvshmem", path, npes == 1 ? "d2d" : "d2d-peer", NULL, timing, o.devices[0],
                     o.devices[npes == 1 ? 0 : 1], NULL, dev ? "device" : "host"};
}

/* The target's check of a host put (PE 1, or the one PE), agreed by both PEs. */
int target_ok(size_t s, const char *what) {
    if (npes == 1) return check_dst(s, what);
    return link_all_ok(me == 1 ? check_dst(s, what) : 1);
}

double event_ms() {
    float ms = 0;
    CK(cudaEventSynchronize(ev1));
    CK(cudaEventElapsedTime(&ms, ev0, ev1));
    return (double)ms;
}

/* ---- host-initiated ---------------------------------------------------------------------- */

void host_put(const gpu_opts &o, size_t s) {
    prepare(s);
    nvshmem_barrier_all();
    if (me == 0) {
        nvshmem_putmem(dst, src, s, peer);
        nvshmem_quiet();
    }
    nvshmem_barrier_all();
    const int ok = target_ok(s, "host nvshmem_putmem");
    if (me == 0) {
        std::vector<double> v((size_t)o.batches);
        const long it = gpu_lat_iters(o, s);
        for (long i = 0; i < it / 10 + 1; ++i) {
            nvshmem_putmem(dst, src, s, peer);
            nvshmem_quiet();
        }
        for (int b = 0; b < o.batches; ++b) {
            double t0 = gpu_now_s();
            for (long i = 0; i < it; ++i) {
                nvshmem_putmem(dst, src, s, peer);
                nvshmem_quiet();
            }
            v[(size_t)b] = (gpu_now_s() - t0) * 1e6 / (double)it;
        }
        gpu_report_lat(o, point("put_lat", "nvshmem_putmem+nvshmem_quiet", "blocking", o), s, v.data(), o.batches, it,
                       ok);
        const long n = gpu_bw_ops(o, s);
        for (long i = 0; i < n / 10 + 1; ++i) nvshmem_putmem(dst, src, s, peer);
        nvshmem_quiet();
        for (int b = 0; b < o.batches; ++b) {
            double t0 = gpu_now_s();
            for (long i = 0; i < n; ++i) nvshmem_putmem(dst, src, s, peer);
            nvshmem_quiet();
            v[(size_t)b] = gpu_now_s() - t0;
        }
        gpu_report_bw(o, point("put_bw", "nvshmem_putmem xN+nvshmem_quiet", "window", o), s, v.data(), o.batches, n,
                      (double)n * (double)s, ok);
    }
    nvshmem_barrier_all();
}

void host_put_stream(const gpu_opts &o, size_t s) {
    prepare(s);
    nvshmem_barrier_all();
    if (me == 0) {
        nvshmemx_putmem_on_stream(dst, src, s, peer, st);
        nvshmemx_quiet_on_stream(st);
        CK(cudaStreamSynchronize(st));
    }
    nvshmem_barrier_all();
    const int ok = target_ok(s, "nvshmemx_putmem_on_stream");
    if (me == 0) {
        std::vector<double> v((size_t)o.batches);
        const long n = gpu_bw_ops(o, s);
        for (long i = 0; i < n / 10 + 1; ++i) nvshmemx_putmem_on_stream(dst, src, s, peer, st);
        nvshmemx_quiet_on_stream(st);
        CK(cudaStreamSynchronize(st));
        for (int b = 0; b < o.batches; ++b) {
            double t0 = gpu_now_s();
            for (long i = 0; i < n; ++i) nvshmemx_putmem_on_stream(dst, src, s, peer, st);
            nvshmemx_quiet_on_stream(st);
            CK(cudaStreamSynchronize(st));
            v[(size_t)b] = gpu_now_s() - t0;
        }
        gpu_report_bw(o, point("put_bw", "nvshmemx_putmem_on_stream xN+quiet_on_stream", "window", o), s, v.data(),
                      o.batches, n, (double)n * (double)s, ok);
    }
    nvshmem_barrier_all();
}

/* ---- device-initiated -------------------------------------------------------------------- */

void launch_pingpong_signal(size_t s, int iters) {
    k_pingpong_signal<<<1, 1, 0, st>>>(dst, src, s, &words[0], round_sig, iters, me, peer);
    CK_LAUNCH();
    round_sig += (uint64_t)iters;
}

void dev_put_signal(const gpu_opts &o, size_t s) {
    prepare(s);
    nvshmem_barrier_all();
    launch_pingpong_signal(s, 1);
    CK(cudaStreamSynchronize(st));
    nvshmem_barrier_all();
    const int ok = link_all_ok(check_dst(s, "device nvshmem_putmem_signal_nbi ping-pong"));
    std::vector<double> v((size_t)o.batches);
    const long it = gpu_lat_iters(o, s);
    launch_pingpong_signal(s, (int)(it / 10 + 1));
    CK(cudaStreamSynchronize(st));
    for (int b = 0; b < o.batches; ++b) {
        nvshmemx_barrier_all_on_stream(st);
        CK(cudaEventRecord(ev0, st));
        launch_pingpong_signal(s, (int)it);
        CK(cudaEventRecord(ev1, st));
        v[(size_t)b] = event_ms() * 1e3 / (2.0 * (double)it);
    }
    if (me == 0)
        gpu_report_lat(o, point("put_signal_lat", "nvshmem_putmem_signal_nbi (device, 1 thread)", "pingpong/2", o), s,
                       v.data(), o.batches, it, ok);
    nvshmem_barrier_all();
}

void launch_pingpong_p(int iters) {
    k_pingpong_p<<<1, 1, 0, st>>>(&words[8], round_p, iters, me, peer);
    CK_LAUNCH();
    round_p += (uint64_t)iters;
}

void dev_p(const gpu_opts &o) {
    nvshmem_barrier_all();
    launch_pingpong_p(1);
    CK(cudaStreamSynchronize(st));
    std::vector<double> v((size_t)o.batches);
    const long it = gpu_lat_iters(o, 8);
    launch_pingpong_p((int)(it / 10 + 1));
    for (int b = 0; b < o.batches; ++b) {
        nvshmemx_barrier_all_on_stream(st);
        CK(cudaEventRecord(ev0, st));
        launch_pingpong_p((int)it);
        CK(cudaEventRecord(ev1, st));
        v[(size_t)b] = event_ms() * 1e3 / (2.0 * (double)it);
    }
    /* Each PE's flag ends at the last round: PE 1 got it from PE 0 and answered with it. */
    uint64_t last = 0;
    CK(cudaMemcpy(&last, &words[8], sizeof last, cudaMemcpyDeviceToHost));
    int mine = last == round_p;
    if (!mine)
        fprintf(stderr, "%s: rank %d: DATA CHECK FAILED: p ping-pong flag is %llu, expected %llu\n", g_prog, me,
                (unsigned long long)last, (unsigned long long)round_p);
    const int ok = link_all_ok(mine);
    if (me == 0)
        gpu_report_lat(o, point("put_lat", "nvshmem_uint64_p+wait_until (device, 1 thread)", "pingpong/2", o), 8,
                       v.data(), o.batches, it, ok);
    nvshmem_barrier_all();
}

void dev_g(const gpu_opts &o) {
    const uint64_t expect = 0x5ca1ab1e0ddba11ull;
    if (me == 1) {
        uint64_t w[2] = {expect, expect};
        CK(cudaMemcpy(&words[16], w, sizeof w, cudaMemcpyHostToDevice));
    }
    CK(cudaMemset(d_bad, 0, sizeof *d_bad));
    CK(cudaDeviceSynchronize());
    nvshmem_barrier_all();
    if (me == 0) {
        std::vector<double> v((size_t)o.batches);
        const long it = gpu_lat_iters(o, 8);
        k_g<<<1, 1, 0, st>>>(&words[16], (int)(it / 10 + 1), peer, expect, d_bad);
        CK_LAUNCH();
        for (int b = 0; b < o.batches; ++b) {
            CK(cudaEventRecord(ev0, st));
            k_g<<<1, 1, 0, st>>>(&words[16], (int)it, peer, expect, d_bad);
            CK_LAUNCH();
            CK(cudaEventRecord(ev1, st));
            v[(size_t)b] = event_ms() * 1e3 / (double)it;
        }
        unsigned long long bad = 0;
        CK(cudaMemcpy(&bad, d_bad, sizeof bad, cudaMemcpyDeviceToHost));
        if (bad)
            fprintf(stderr, "%s: rank 0: DATA CHECK FAILED: %llu of the nvshmem_uint64_g reads returned a wrong value\n",
                    g_prog, bad);
        gpu_report_lat(o, point("get_lat", "nvshmem_uint64_g (device, 1 thread)", "device-loop", o), 8, v.data(),
                       o.batches, it, bad == 0);
    }
    nvshmem_barrier_all();
}

void dev_fadd(const gpu_opts &o) {
    CK(cudaMemset(&words[24], 0, sizeof(uint64_t)));
    CK(cudaDeviceSynchronize());
    nvshmem_barrier_all();
    long total = 0;
    const long it = gpu_lat_iters(o, 8);
    std::vector<double> v((size_t)o.batches);
    if (me == 0) {
        k_fadd<<<1, 1, 0, st>>>(&words[24], (int)(it / 10 + 1), peer, d_bad);
        CK_LAUNCH();
        total += it / 10 + 1;
        for (int b = 0; b < o.batches; ++b) {
            CK(cudaEventRecord(ev0, st));
            k_fadd<<<1, 1, 0, st>>>(&words[24], (int)it, peer, d_bad);
            CK_LAUNCH();
            total += it;
            CK(cudaEventRecord(ev1, st));
            v[(size_t)b] = event_ms() * 1e3 / (double)it;
        }
        CK(cudaStreamSynchronize(st));
        link_send(&total, sizeof total);
    }
    nvshmem_barrier_all();
    int mine = 1;
    if (me == 1) {
        link_recv(&total, sizeof total);
        uint64_t got = 0;
        CK(cudaMemcpy(&got, &words[24], sizeof got, cudaMemcpyDeviceToHost));
        mine = got == (uint64_t)total;
        if (!mine)
            fprintf(stderr, "%s: rank 1: DATA CHECK FAILED: the counter is %llu after %ld fetch_adds\n", g_prog,
                    (unsigned long long)got, total);
    }
    const int ok = link_all_ok(mine);
    if (me == 0)
        gpu_report_lat(o, point("fadd_lat", "nvshmem_uint64_atomic_fetch_add (device, 1 thread)", "device-loop", o), 8,
                       v.data(), o.batches, it, ok);
    nvshmem_barrier_all();
}

int block_count(size_t s) {
    size_t nb = s / (64u << 10);
    return (int)(nb < 1 ? 1 : nb > 32 ? 32 : nb);
}

void dev_put_block(const gpu_opts &o, size_t s) {
    prepare(s);
    nvshmem_barrier_all();
    const int nb = block_count(s);
    if (me == 0) {
        k_put_block<<<nb, 512, 0, st>>>(dst, src, s, 1, peer);
        CK_LAUNCH();
        CK(cudaStreamSynchronize(st));
    }
    nvshmem_barrier_all();
    const int ok = link_all_ok(me == 1 ? check_dst(s, "device nvshmemx_putmem_block") : 1);
    if (me == 0) {
        std::vector<double> v((size_t)o.batches);
        const long n = gpu_bw_ops(o, s);
        k_put_block<<<nb, 512, 0, st>>>(dst, src, s, (int)(n / 10 + 1), peer);
        CK_LAUNCH();
        for (int b = 0; b < o.batches; ++b) {
            CK(cudaEventRecord(ev0, st));
            k_put_block<<<nb, 512, 0, st>>>(dst, src, s, (int)n, peer);
            CK_LAUNCH();
            CK(cudaEventRecord(ev1, st));
            v[(size_t)b] = event_ms() / 1e3;
        }
        char note[32];
        snprintf(note, sizeof note, "%d block%s of 512 threads", nb, nb == 1 ? "" : "s");
        gpu_point pt = point("put_bw", "nvshmemx_putmem_block (device, up to 32 blocks)", "device-loop", o);
        pt.note = note;
        gpu_report_bw(o, pt, s, v.data(), o.batches, n, (double)n * (double)s, ok);
    }
    nvshmem_barrier_all();
}

}  // namespace

int main(int argc, char **argv) {
    g_prog = "hgas-nvshmem-peer";
    gpu_safe_env();
    const int rank = peer_role();
    gpu_opts o;
    gpu_parse(argc, argv, &o,
              "measurements (--only): host_put host_put_stream dev_put_signal dev_p dev_g dev_fadd dev_put_block\n"
              "  (or 'host', 'device' for each group). Two PEs on two GPUs; the second is started by the program.\n");
    const bool host_on = gpu_selected(o, "host"), dev_on = gpu_selected(o, "device");
    auto want = [&](const char *name, bool group) { return group && !o.only.empty() ? true : gpu_selected(o, name); };
    const bool m_put = want("host_put", host_on), m_stream = want("host_put_stream", host_on);
    bool m_sig = want("dev_put_signal", dev_on), m_p = want("dev_p", dev_on), m_g = want("dev_g", dev_on);
    bool m_blk = want("dev_put_block", dev_on), m_fadd = want("dev_fadd", dev_on);

    char symsize[64];
    snprintf(symsize, sizeof symsize, "%zuM", 2 * (o.max_size >> 20) + 128);
    gpu_default_env("NVSHMEM_SYMMETRIC_SIZE", symsize);
    gpu_default_env("NVSHMEM_BOOTSTRAP", "UID");

    if (rank == 0) {
        const int ndev = gpu_count_or_die();
        if (ndev < 2) {
            npes = 1;
            if (o.devices[0] >= ndev) gpu_die("--devices: GPU %d does not exist (%d visible)", o.devices[0], ndev);
            if (m_sig || m_p || m_g || m_blk || m_fadd)
                gpu_skip("hgas-nvshmem-peer device measurements",
                         "NVSHMEM needs one GPU per PE and this machine has 1 GPU: one PE measures the host API only");
            m_sig = m_p = m_g = m_blk = m_fadd = false;
        } else if (o.devices[0] >= ndev || o.devices[1] >= ndev || o.devices[0] == o.devices[1]) {
            gpu_die("--devices %d,%d: need two different GPUs of the %d visible", o.devices[0], o.devices[1], ndev);
        }
        g_device_name = gpu_device_name(o.devices[0]);
        if (npes == 2) peer_spawn(argv);
    }
    peer_arm_timeout(o.timeout_s);
    g_transport = o.transport;
    me = rank;
    peer = npes == 1 ? me : 1 - me;
    gpu_pin(o, me);
    CK(cudaSetDevice(o.devices[me]));

    nvshmemx_uniqueid_t id = NVSHMEMX_UNIQUEID_INITIALIZER;
    if (me == 0) {
        int r = nvshmemx_get_uniqueid(&id);
        if (r != 0) gpu_die("nvshmemx_get_uniqueid returned %d", r);
        if (npes == 2) link_send(&id, sizeof id);
    } else {
        link_recv(&id, sizeof id);
    }
    nvshmemx_init_attr_t attr = NVSHMEMX_INIT_ATTR_INITIALIZER;
    int r = nvshmemx_set_attr_uniqueid_args(me, npes, &id, &attr);
    if (r != 0) gpu_die("nvshmemx_set_attr_uniqueid_args returned %d", r);
    const double t_init = gpu_now_s();
    r = nvshmemx_init_attr(NVSHMEMX_INIT_WITH_UNIQUEID, &attr);
    if (r != 0) gpu_die("nvshmemx_init_attr (unique-id bootstrap) returned %d", r);
    const double init_s = gpu_now_s() - t_init;
    if (nvshmem_my_pe() != me || nvshmem_n_pes() != npes)
        gpu_die("NVSHMEM says PE %d of %d, expected %d of %d", nvshmem_my_pe(), nvshmem_n_pes(), me, npes);

    dst = (char *)nvshmem_malloc(o.max_size);
    src = (char *)nvshmem_malloc(o.max_size);
    words = (uint64_t *)nvshmem_calloc(32, sizeof(uint64_t));
    if (!dst || !src || !words)
        gpu_die("nvshmem_malloc of 2 x %zu bytes failed (NVSHMEM_SYMMETRIC_SIZE=%s)", o.max_size,
                getenv("NVSHMEM_SYMMETRIC_SIZE"));
    CK(cudaMalloc((void **)&d_bad, sizeof *d_bad));
    CK(cudaMallocHost((void **)&h_pat, o.max_size));
    CK(cudaMallocHost((void **)&h_chk, o.max_size));
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    CK(cudaEventCreate(&ev0));
    CK(cudaEventCreate(&ev1));
    nvshmem_barrier_all();

    if (me == 0) {
        char pe1[64] = "no PE 1: PE 0 puts to itself";
        if (npes == 2) snprintf(pe1, sizeof pe1, "PE 1 on GPU %d", o.devices[1]);
        printf("# hgas-nvshmem-peer: NVSHMEM %d.%d.%d, PE 0 on GPU %d (%s), %s; init %.3f s; sizes "
               "%zu..%zu x%u; median of %d batches\n",
               NVSHMEM_VENDOR_MAJOR_VERSION, NVSHMEM_VENDOR_MINOR_VERSION, NVSHMEM_VENDOR_PATCH_VERSION, o.devices[0],
               g_device_name.c_str(), pe1, init_s, o.min_size, o.max_size, o.factor, o.batches);
        fflush(stdout);
    }
    const auto sizes = gpu_sizes(o);
    if (m_put)
        for (size_t s : sizes) host_put(o, s);
    if (m_stream)
        for (size_t s : sizes) host_put_stream(o, s);
    if (m_sig)
        for (size_t s : sizes)
            if (s <= k_dev_pingpong_max) dev_put_signal(o, s);
    if (m_p) dev_p(o);
    if (m_g) dev_g(o);
    if (m_fadd) dev_fadd(o);
    if (m_blk)
        for (size_t s : sizes) dev_put_block(o, s);

    nvshmem_barrier_all();
    peer_finishing();
    CK(cudaEventDestroy(ev0));
    CK(cudaEventDestroy(ev1));
    CK(cudaStreamDestroy(st));
    CK(cudaFreeHost(h_pat));
    CK(cudaFreeHost(h_chk));
    CK(cudaFree(d_bad));
    nvshmem_free(words);
    nvshmem_free(src);
    nvshmem_free(dst);
    nvshmem_finalize();
    const int child_failed = peer_finish();
    if (g_check_failed) fprintf(stderr, "%s: rank %d: FAILED: a data check failed (see above)\n", g_prog, me);
    return g_check_failed || child_failed ? 1 : 0;
}
