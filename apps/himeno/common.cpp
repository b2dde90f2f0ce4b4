#include "common.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "rank_launch.hpp"

namespace himeno {

void check(hgas_status_t s, const char *what) {
    if (s == HGAS_OK) return;
    die(std::string("himeno: ") + what + ": " + hgas_last_error());
}

void die(const std::string &msg) {
    hgas_abort(1, msg.c_str());
    std::abort();  // not reached: hgas_abort does not return
}

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

double cpu_seconds() {
    rusage ru{};
    // One rank per process: every thread of the process is the rank's. Ranks as threads: the
    // process is shared, so only the calling thread (the rank's own, or one of its team's).
    getrusage(apps::ranks_per_process() > 1 ? RUSAGE_THREAD : RUSAGE_SELF, &ru);
    return double(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) + 1e-6 * double(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

double wait_timeout_s() {
    const char *v = std::getenv("HGAS_TIMEOUT");  // hgas validated it at init
    const double t = v ? std::strtod(v, nullptr) : 0.0;
    return t > 0 ? t : 300.0;  // hgas's default
}

bool all_ranks_have(kind k) {
    if (k == kind::host) return true;
    const hgas_kind_t hk = k == kind::cuda ? HGAS_KIND_CUDA : HGAS_KIND_SIM;
    double ok = hgas_kind_available(hk) ? 1.0 : 0.0;
    check(hgas_allreduce(&ok, &ok, 1, HGAS_DOUBLE, HGAS_OP_MIN), "hgas_allreduce");
    if (ok > 0) return true;
    if (hgas_rank_me() == 0)
        std::fprintf(stderr, "%s",
                     k == kind::cuda
                         ? "himeno: kind cuda needs a GPU on every rank, and hgas has no cuda memory on some rank (no "
                           "CUDA device visible, hgas built without CUDA, or HGAS_CUDA_HEAP_SIZE=0; hgas-info says "
                           "which)\n"
                         : "himeno: kind sim needs hgas's sim memory on every rank: set HGAS_SIM_HEAP_SIZE (e.g. 16M)\n");
    return false;
}

double combine_gosa(int mimax, int lo, int n, const double *sums) {
    std::vector<double> planes(mimax - 2, 0.0);
    std::copy(sums, sums + n, planes.begin() + (lo - 1));
    check(hgas_allreduce(planes.data(), planes.data(), planes.size(), HGAS_DOUBLE, HGAS_OP_SUM), "hgas_allreduce");
    double g = 0.0;
    for (double v : planes) g += v;
    return g;
}

double plane_sum(const float *plane, size_t floats) {
    double s = 0.0;
    for (size_t x = 0; x < floats; ++x) s += plane[x];
    return s;
}

uint64_t plane_hash(const float *plane, size_t floats) {
    uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a 64
    for (size_t x = 0; x < floats; ++x) {
        uint32_t bits;
        std::memcpy(&bits, &plane[x], sizeof bits);
        for (int b = 0; b < 4; ++b) h = (h ^ ((bits >> (8 * b)) & 0xff)) * 0x100000001b3ull;
    }
    return h;
}

void field_checksum(int mimax, int lo, int n, size_t plane_floats, const std::function<const float *(int)> &plane,
                    double *sum, uint64_t *hash) {
    const int me = hgas_rank_me(), ranks = hgas_rank_n();
    std::vector<double> sums(mimax, 0.0);
    std::vector<uint64_t> hashes(mimax, 0);
    // Halo planes belong to the neighbours; the first and last rank own the fixed boundaries.
    const int first = me == 0 ? 0 : 1, last = me == ranks - 1 ? n + 1 : n;
    for (int l = first; l <= last; ++l) {
        const float *p = plane(l);
        sums[lo - 1 + l] = plane_sum(p, plane_floats);
        hashes[lo - 1 + l] = plane_hash(p, plane_floats);
    }
    check(hgas_reduce(sums.data(), sums.data(), sums.size(), HGAS_DOUBLE, HGAS_OP_SUM, 0), "hgas_reduce");
    check(hgas_reduce(hashes.data(), hashes.data(), hashes.size(), HGAS_UINT64, HGAS_OP_SUM, 0), "hgas_reduce");
    *sum = 0.0;
    *hash = 0xcbf29ce484222325ull;
    for (int i = 0; i < mimax; ++i) {
        *sum += sums[i];
        for (int b = 0; b < 8; ++b) *hash = (*hash ^ ((hashes[i] >> (8 * b)) & 0xff)) * 0x100000001b3ull;
    }
}

energy_state agree_energy(const gpu_energy &e) {
    double ok = e.available() || e.no_gpu_here() ? 1.0 : 0.0, any = e.available() ? 1.0 : 0.0;
    check(hgas_allreduce(&ok, &ok, 1, HGAS_DOUBLE, HGAS_OP_MIN), "hgas_allreduce");
    check(hgas_allreduce(&any, &any, 1, HGAS_DOUBLE, HGAS_OP_MAX), "hgas_allreduce");
    energy_state s;
    s.have = ok > 0 && any > 0;
    s.note = s.have ? "NVML total energy of the ranks' GPUs"
                    : "unavailable (" + (e.why().empty() ? std::string("NVML failed on some rank") : e.why()) + ")";
    return s;
}

double energy_delta(const gpu_energy &e, double e0, double e1) {
    // Ranks without a GPU of their own add 0; NaN anywhere makes the sum NaN (unavailable).
    return e.no_gpu_here() ? 0.0 : e1 - e0;
}

}  // namespace himeno
