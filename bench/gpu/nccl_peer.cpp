/* hgas-nccl-peer — NCCL point-to-point between two GPUs of one machine, called from C++ (no
 * Python, no MPI): the two-sided peer of hgas's GPU-to-GPU puts.
 *
 * Started alone: it starts its second rank itself (spawn.h); rank 0 calls ncclGetUniqueId and
 * passes the id over a socket, both call ncclCommInitRank(comm, 2, id, rank). Rank r uses GPU
 * --devices[r] (default 0,1). NCCL puts one rank on one GPU: with one GPU the program says so
 * and exits 0 without measuring.
 *
 *   lat       put_lat: ping-pong, rank 0 ncclSend then ncclRecv, rank 1 ncclRecv then ncclSend,
 *             all queued on one stream, one cudaStreamSynchronize per batch; one-way time
 *             (pingpong/2): what a GPU pipeline that keeps its stream full sees
 *   lat_sync  put_lat: the same ping-pong with cudaStreamSynchronize after every operation:
 *             what a host that waits for each message sees
 *   bw        put_bw: N ncclSend (rank 0) / ncclRecv (rank 1) back to back on one stream, one
 *             cudaStreamSynchronize (window)
 * Ranks line up over the socket before each timed batch; rank 0 times with the host clock.
 * Data check before timing: rank 1 compares what it received (pattern into a poisoned buffer)
 * and tells rank 0. */
#include "gpu_common.h"
#include "spawn.h"

#include <nccl.h>

namespace {

#define NCK(call)                                                                                           \
    do {                                                                                                    \
        ncclResult_t nck_r_ = (call);                                                                       \
        if (nck_r_ != ncclSuccess)                                                                          \
            gpu_die("NCCL error %d (%s) from %s at %s:%d%s%s", (int)nck_r_, ncclGetErrorString(nck_r_), #call, \
                    __FILE__, __LINE__, g_comm ? ": " : "", g_comm ? ncclGetLastError(g_comm) : "");           \
    } while (0)

ncclComm_t g_comm = NULL;
int me, peer;
unsigned char *sbuf, *rbuf, *h_pat, *h_chk;
cudaStream_t st;

gpu_point point(const char *bench, const char *path, const char *timing, const gpu_opts &o) {
    return gpu_point{bench, "nccl", path, "d2d-peer", NULL, timing, o.devices[0], o.devices[1], NULL, "host"};
}

/* Rank 0 sends the pattern into rank 1's poisoned rbuf; rank 1 checks; both learn the result. */
int check(size_t s) {
    bench_fill(h_pat, s, 1);
    if (me == 0) CK(cudaMemcpy(sbuf, h_pat, s, cudaMemcpyHostToDevice));
    else CK(cudaMemset(rbuf, 0xEE, s));
    CK(cudaDeviceSynchronize());
    link_barrier();
    if (me == 0) NCK(ncclSend(sbuf, s, ncclInt8, peer, g_comm, st));
    else NCK(ncclRecv(rbuf, s, ncclInt8, peer, g_comm, st));
    CK(cudaStreamSynchronize(st));
    int ok = 1;
    if (me == 1) {
        CK(cudaMemcpy(h_chk, rbuf, s, cudaMemcpyDeviceToHost));
        ok = gpu_verify(h_chk, h_pat, s, "ncclSend -> ncclRecv");
    }
    return link_all_ok(ok);
}

void pingpong(size_t s, long n, bool sync_each) {
    for (long i = 0; i < n; ++i) {
        if (me == 0) {
            NCK(ncclSend(sbuf, s, ncclInt8, peer, g_comm, st));
            if (sync_each) CK(cudaStreamSynchronize(st));
            NCK(ncclRecv(rbuf, s, ncclInt8, peer, g_comm, st));
            if (sync_each) CK(cudaStreamSynchronize(st));
        } else {
            NCK(ncclRecv(rbuf, s, ncclInt8, peer, g_comm, st));
            if (sync_each) CK(cudaStreamSynchronize(st));
            NCK(ncclSend(rbuf, s, ncclInt8, peer, g_comm, st));
            if (sync_each) CK(cudaStreamSynchronize(st));
        }
    }
    CK(cudaStreamSynchronize(st));
}

void lat(const gpu_opts &o, size_t s, bool sync_each) {
    const int ok = check(s);
    std::vector<double> v((size_t)o.batches);
    const long it = gpu_lat_iters(o, s);
    pingpong(s, it / 10 + 1, sync_each);
    for (int b = 0; b < o.batches; ++b) {
        link_barrier();
        double t0 = gpu_now_s();
        pingpong(s, it, sync_each);
        v[(size_t)b] = (gpu_now_s() - t0) * 1e6 / (2.0 * (double)it);
    }
    if (me == 0)
        gpu_report_lat(o,
                       point("put_lat",
                             sync_each ? "ncclSend/ncclRecv ping-pong, sync each" : "ncclSend/ncclRecv ping-pong, queued",
                             "pingpong/2", o),
                       s, v.data(), o.batches, it, ok);
}

void stream_ops(size_t s, long n) {
    for (long i = 0; i < n; ++i) {
        if (me == 0) NCK(ncclSend(sbuf, s, ncclInt8, peer, g_comm, st));
        else NCK(ncclRecv(rbuf, s, ncclInt8, peer, g_comm, st));
    }
    CK(cudaStreamSynchronize(st));
}

void bw(const gpu_opts &o, size_t s) {
    const int ok = check(s);
    std::vector<double> v((size_t)o.batches);
    const long n = gpu_bw_ops(o, s);
    stream_ops(s, n / 10 + 1);
    for (int b = 0; b < o.batches; ++b) {
        link_barrier();
        double t0 = gpu_now_s();
        stream_ops(s, n);
        v[(size_t)b] = gpu_now_s() - t0;
    }
    if (me == 0)
        gpu_report_bw(o, point("put_bw", "ncclSend xN / ncclRecv xN", "window", o), s, v.data(), o.batches, n,
                      (double)n * (double)s, ok);
}

}  // namespace

int main(int argc, char **argv) {
    g_prog = "hgas-nccl-peer";
    gpu_safe_env();
    const int rank = peer_role();
    gpu_opts o;
    gpu_parse(argc, argv, &o,
              "measurements (--only): lat lat_sync bw. Two ranks on two GPUs; the second is started by the "
              "program.\n");
    if (rank == 0) {
        const int ndev = gpu_count_or_die();
        if (ndev < 2) {
            gpu_skip("hgas-nccl-peer (all measurements)",
                     "NCCL runs one rank per GPU and this machine has 1 GPU; run it where 2 GPUs are visible");
            return 0;
        }
        if (o.devices[0] >= ndev || o.devices[1] >= ndev || o.devices[0] == o.devices[1])
            gpu_die("--devices %d,%d: need two different GPUs of the %d visible", o.devices[0], o.devices[1], ndev);
        g_device_name = gpu_device_name(o.devices[0]);
        peer_spawn(argv);
    }
    peer_arm_timeout(o.timeout_s);
    g_transport = o.transport;
    me = rank;
    peer = 1 - me;
    gpu_pin(o, me);
    CK(cudaSetDevice(o.devices[me]));

    ncclUniqueId id;
    if (me == 0) {
        NCK(ncclGetUniqueId(&id));
        link_send(&id, sizeof id);
    } else {
        link_recv(&id, sizeof id);
    }
    const double t_init = gpu_now_s();
    NCK(ncclCommInitRank(&g_comm, 2, id, me));
    const double init_s = gpu_now_s() - t_init;
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    CK(cudaMalloc((void **)&sbuf, o.max_size));
    CK(cudaMalloc((void **)&rbuf, o.max_size));
    CK(cudaMemset(sbuf, 0, o.max_size));
    CK(cudaMemset(rbuf, 0, o.max_size));
    CK(cudaMallocHost((void **)&h_pat, o.max_size));
    CK(cudaMallocHost((void **)&h_chk, o.max_size));

    if (me == 0) {
        int v = 0;
        NCK(ncclGetVersion(&v));
        printf("# hgas-nccl-peer: NCCL %d.%d.%d, rank 0 on GPU %d (%s), rank 1 on GPU %d; init %.3f s; sizes "
               "%zu..%zu x%u; median of %d batches\n",
               v / 10000, (v / 100) % 100, v % 100, o.devices[0], g_device_name.c_str(), o.devices[1], init_s,
               o.min_size, o.max_size, o.factor, o.batches);
        fflush(stdout);
    }
    const auto sizes = gpu_sizes(o);
    if (gpu_selected(o, "lat"))
        for (size_t s : sizes) lat(o, s, false);
    if (gpu_selected(o, "lat_sync"))
        for (size_t s : sizes) lat(o, s, true);
    if (gpu_selected(o, "bw"))
        for (size_t s : sizes) bw(o, s);

    link_barrier();
    peer_finishing();
    CK(cudaStreamSynchronize(st));
    NCK(ncclCommFinalize(g_comm));
    NCK(ncclCommDestroy(g_comm));
    g_comm = NULL;
    CK(cudaStreamDestroy(st));
    CK(cudaFree(sbuf));
    CK(cudaFree(rbuf));
    CK(cudaFreeHost(h_pat));
    CK(cudaFreeHost(h_chk));
    const int child_failed = peer_finish();
    if (g_check_failed) fprintf(stderr, "%s: rank %d: FAILED: a data check failed (see above)\n", g_prog, me);
    return g_check_failed || child_failed ? 1 : 0;
}
