// What every GPU mode shares: the rank's GPU, the field on it, two streams, the roofline
// measurement (a device copy and one sweep, timed with events), the timed runs through the
// mode's driver, energy from NVML for that GPU, and the checksum.
#include <hgas/hgas.h>
#include <sys/prctl.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

#include "common.hpp"
#include "gpu_check.hpp"
#include "gpu_field.hpp"
#include "gpu_mode.hpp"
#include "modes.hpp"
#include "slab.hpp"

namespace himeno {

bool mode_built(mode m, std::string *why) { return m == mode::cpu || gpu::gpu_mode_built(m, why); }

bool gpu_visible(std::string *why) {
    int count = 0;
    const cudaError_t e = cudaGetDeviceCount(&count);  // creates no context
    if (e == cudaSuccess && count > 0) return true;
    cudaGetLastError();
    *why = std::string("no CUDA device is visible here (cudaGetDeviceCount: ") +
           (e != cudaSuccess ? cudaGetErrorString(e) : "0 devices") + ")";
    return false;
}

namespace gpu {
namespace {

#ifndef HIMENO_EMULATE
constexpr int REPS = 7;                         // timed repetitions of a measurement (median)
constexpr size_t COPY_BYTES = size_t(256) << 20;  // 5 x the L2 of an H100/H200
constexpr kind HALO_KIND = kind::cuda;
#else  // tests/emu: the CPU plays the GPU; its "device memory" is host memory
constexpr int REPS = 1;
constexpr size_t COPY_BYTES = size_t(1) << 20;
constexpr kind HALO_KIND = kind::host;
#endif

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

// Seconds of `work` on stream s, median of REPS after one warm-up, timed with events.
template <class F>
double time_on(cudaStream_t s, int poll_us, F work) {
    cudaEvent_t a, b;
    HIMENO_CK(cudaEventCreate(&a));
    HIMENO_CK(cudaEventCreate(&b));
    std::vector<double> t;
    for (int r = 0; r <= REPS; ++r) {
        HIMENO_CK(cudaEventRecord(a, s));
        work();
        HIMENO_CK(cudaEventRecord(b, s));
        wait_event(b, "a measurement", poll_us);
        float ms = 0;
        HIMENO_CK(cudaEventElapsedTime(&ms, a, b));
        if (r > 0) t.push_back(ms * 1e-3);
    }
    HIMENO_CK(cudaEventDestroy(a));
    HIMENO_CK(cudaEventDestroy(b));
    return median(t);
}

// The roofline reference: a device-to-device copy of COPY_BYTES, counting bytes read plus
// written. NaN if the GPU has no room for it beside the field.
double copy_gbps(cudaStream_t s, int poll_us) {
    const size_t bytes = COPY_BYTES;
    void *x = nullptr, *y = nullptr;
    if (cudaMalloc(&x, bytes) != cudaSuccess || cudaMalloc(&y, bytes) != cudaSuccess) {
        cudaGetLastError();
        cudaFree(x);
        return NAN;
    }
    HIMENO_CK(cudaMemsetAsync(x, 1, bytes, s));
    const double t = time_on(s, poll_us, [&] { HIMENO_CK(cudaMemcpyAsync(y, x, bytes, cudaMemcpyDeviceToDevice, s)); });
    HIMENO_CK(cudaFree(x));
    HIMENO_CK(cudaFree(y));
    return 2.0 * bytes / t * 1e-9;
}

struct measured {
    double copy_gbps, kernel_s, kernel_gbps, kernel_bytes;
};
static_assert(sizeof(measured) == 4 * sizeof(double), "gathered as 4 doubles per rank");

// One sweep over all the rank's planes (one launch) on the initial field, against the copy.
measured measure(field &f, cudaStream_t s, int poll_us) {
    measured m{};
    m.copy_gbps = copy_gbps(s, poll_us);
    f.init(s);
    m.kernel_s = time_on(s, poll_us, [&] { f.sweep_all(s); });
    m.kernel_bytes = f.sweep_bytes();
    m.kernel_gbps = m.kernel_bytes / m.kernel_s * 1e-9;
    return m;
}

result timed(driver &d, bool exchange, int iters, gpu_energy &energy) {
    d.prepare(exchange);
    check(hgas_barrier(), "hgas_barrier");
    result r;
    // The energy counter is read outside the CPU-time window: an NVML call is CPU time of its own.
    const double e0 = energy.read_joules(), c0 = cpu_seconds(), t0 = now();
    r.gosa = d.run();
    const double t1 = now(), c1 = cpu_seconds(), e1 = energy.read_joules();
    d.release();
    const double mine = t1 - t0;
    check(hgas_allreduce(&r.seconds, &mine, 1, HGAS_DOUBLE, HGAS_OP_MAX), "hgas_allreduce");
    r.cpu_per_iter = (c1 - c0) / iters;
    const double de = energy_delta(energy, e0, e1);
    check(hgas_allreduce(&r.energy_j, &de, 1, HGAS_DOUBLE, HGAS_OP_SUM), "hgas_allreduce");
    return r;
}

}  // namespace
}  // namespace gpu

int run_gpu(const options &o, run_output &out) {
    using namespace gpu;
    const int me = hgas_rank_me(), ranks = hgas_rank_n(), local = hgas_local_rank();
    if (!all_ranks_have(HALO_KIND)) return 1;
    int count = 0;
    HIMENO_CK(cudaGetDeviceCount(&count));
    const int dev = local % count;  // as hgas maps ranks to GPUs for its cuda heap
    HIMENO_CK(cudaSetDevice(dev));
    // usleep(poll_us) should sleep about poll_us: the default timer slack adds 50 us.
    prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);

    cudaDeviceProp prop{};
    HIMENO_CK(cudaGetDeviceProperties(&prop, dev));
    char bus[32] = {};
    HIMENO_CK(cudaDeviceGetPCIBusId(bus, sizeof bus, dev));
    char desc[160];
    std::snprintf(desc, sizeof desc, "cuda:%d %.80s (%.31s)", dev, prop.name, bus);
    int clock_khz = 0, bus_bits = 0;
    if (cudaDeviceGetAttribute(&clock_khz, cudaDevAttrMemoryClockRate, dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, dev) != cudaSuccess)
        cudaGetLastError(), clock_khz = bus_bits = 0;

    int lo, hi;
    split_planes(o.mimax, ranks, me, &lo, &hi);
    const int n = hi - lo;
    field f({o.mimax, o.mjmax, o.mkmax, lo, n});
    int least = 0, greatest = 0;
    HIMENO_CK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    cudaStream_t boundary, bulk;
    HIMENO_CK(cudaStreamCreateWithPriority(&boundary, cudaStreamNonBlocking, greatest));
    HIMENO_CK(cudaStreamCreateWithPriority(&bulk, cudaStreamNonBlocking, least));

    // The first rank on each GPU counts its energy; ranks sharing that GPU add 0.
    gpu_energy energy(bus, local < count);
    out.energy = agree_energy(energy);
    out.threads = 1;

    // Ranks sharing a GPU measure one after the other, so that they do not disturb each other.
    measured m{};
    for (int r = 0; r < ranks; ++r) {
        if (r == me) m = measure(f, bulk, o.poll_us);
        check(hgas_barrier(), "hgas_barrier");
    }
    double *all = nullptr;
    char *names = nullptr;
    check(hgas_malloc(sizeof(measured) * ranks, reinterpret_cast<void **>(&all)), "hgas_malloc");
    check(hgas_malloc(sizeof desc * ranks, reinterpret_cast<void **>(&names)), "hgas_malloc");
    check(hgas_fcollect(all, &m, sizeof m), "hgas_fcollect");
    check(hgas_fcollect(names, desc, sizeof desc), "hgas_fcollect");
    gpu_report &g = out.gpu;
    g.present = true;
    for (int r = 0; r < ranks; ++r) {
        const double *x = all + 4 * r;
        g.copy_gbps.push_back(x[0]);
        g.kernel_s.push_back(x[1]);
        g.kernel_gbps.push_back(x[2]);
        g.kernel_bytes.push_back(x[3]);
        g.device.emplace_back(names + sizeof desc * r, strnlen(names + sizeof desc * r, sizeof desc));
    }
    g.peak_gbps = 2.0 * clock_khz * 1e3 * (bus_bits / 8.0) * 1e-9;  // double data rate; rank 0's is printed
    hgas_free(names);
    hgas_free(all);

    context c{o, f, boundary, bulk, lo, n, HALO_KIND};
    std::unique_ptr<driver> d = make_driver(o.mode, c);
    if (!d) die(std::string("himeno: mode ") + mode_name(o.mode) + " has no GPU driver");
    out.main = timed(*d, o.exchange, o.iters, energy);
    if (o.checksum) {
        std::vector<float> plane(f.plane_floats());
        field_checksum(o.mimax, lo, n, f.plane_floats(),
                       [&](int l) {
                           f.download_p(l, plane.data());
                           return plane.data();
                       },
                       &out.sum, &out.hash);
    }
    if (o.overhead) out.bare = timed(*d, false, o.iters, energy);
    d.reset();
    HIMENO_CK(cudaStreamDestroy(bulk));
    HIMENO_CK(cudaStreamDestroy(boundary));
    return 0;
}

}  // namespace himeno
