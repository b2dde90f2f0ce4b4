// himeno: the Himeno benchmark (19-point Jacobi, himenoBMTxpa) on hgas, slabs along i, halo
// planes exchanged with put-with-signal. README.md in this folder describes it.
#include <hgas/hgas.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "energy.hpp"
#include "options.hpp"
#include "slab.hpp"

namespace himeno {
namespace {

void check(hgas_status_t s, const char *what) {
    if (s == HGAS_OK) return;
    std::string msg = std::string("himeno: ") + what + ": " + hgas_last_error();
    hgas_abort(1, msg.c_str());
}

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

double cpu_seconds() {
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);  // every thread of this rank's process
    return double(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) + 1e-6 * double(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

// Polls hgas progress from team member 0 while the interior is computed, so that transports
// that need this rank's CPU (UCX over TCP, active messages) move the halos meanwhile.
struct progress_poller final : poller {
    explicit progress_poller(int us) : period(us * 1e-6), next(now() + period) {}
    void tick() override {
        const double t = now();
        if (t < next) return;
        hgas_progress();
        next = t + period;
    }
    double period, next;
};

// Receive halo buffers: [side][slot][plane], side 0 from the lower rank (me-1), side 1 from
// the upper one. Two slots, used by sweep parity: a neighbour can be at most one sweep ahead
// (it needs my halo of sweep it to start sweep it+1), so slot it%2 is never overwritten
// before I have read it. Signal words are host memory, one cache line each.
class halo {
public:
    halo(kind k, size_t plane_floats, int me) : kind_(k), floats_(plane_floats), me_(me) {
        const size_t bytes = 4 * plane_floats * sizeof(float);
        if (k == kind::host) {
            check(hgas_malloc(bytes, reinterpret_cast<void **>(&recv_)), "hgas_malloc (halo buffers)");
        } else {
            check(hgas_malloc_kind(bytes, k == kind::sim ? HGAS_KIND_SIM : HGAS_KIND_CUDA,
                                   reinterpret_cast<void **>(&recv_)),
                  "hgas_malloc_kind (halo buffers)");
            staging_.resize(plane_floats);  // sim memory faults on a CPU load: fetch it with hgas_get
        }
        check(hgas_calloc(16, sizeof(uint64_t), reinterpret_cast<void **>(&sig_)), "hgas_calloc (signals)");
    }
    ~halo() {
        hgas_free(sig_);
        hgas_free(recv_);
    }

    // Puts my boundary plane into neighbour `to`'s buffer for side `side`, with its signal.
    void send(int to, int side, int it, const float *plane) {
        hgas_gptr_t dst, sig;
        check(hgas_ptr(buffer(side, it), to, &dst), "hgas_ptr");
        check(hgas_ptr(&sig_[8 * side], to, &sig), "hgas_ptr");
        check(hgas_put_signal_nbi(dst, plane, floats_ * sizeof(float), sig, uint64_t(it) + 1, HGAS_SIGNAL_SET),
              "hgas_put_signal_nbi (halo)");
    }
    // Waits for side `side` of sweep `it` and returns the plane as host memory.
    const float *receive(int side, int it) {
        check(hgas_signal_wait_until(&sig_[8 * side], HGAS_CMP_GE, uint64_t(it) + 1, nullptr), "halo wait");
        if (kind_ == kind::host) return buffer(side, it);
        hgas_gptr_t src;
        check(hgas_ptr(buffer(side, it), me_, &src), "hgas_ptr");
        check(hgas_get(staging_.data(), src, floats_ * sizeof(float)), "hgas_get (halo)");
        return staging_.data();
    }

private:
    float *buffer(int side, int it) { return recv_ + (size_t(side) * 2 + (it & 1)) * floats_; }

    kind kind_;
    size_t floats_;
    int me_;
    float *recv_ = nullptr;
    uint64_t *sig_ = nullptr;
    std::vector<float> staging_;
};

struct result {
    double gosa = 0, seconds = 0, cpu_per_iter = 0, energy_j = NAN;
};

// gosa in global plane order, independent of the decomposition: each rank writes its planes'
// sums into a vector of all interior planes (zeros elsewhere), the allreduce adds exact zeros
// to each entry, and every rank sums the entries in plane order.
double global_gosa(slab &s, std::vector<double> &planes) {
    std::fill(planes.begin(), planes.end(), 0.0);
    for (int l = 1; l <= s.planes(); ++l) planes[s.lo() - 1 + l - 1] = s.plane_gosa(l);
    check(hgas_allreduce(planes.data(), planes.data(), planes.size(), HGAS_DOUBLE, HGAS_OP_SUM), "hgas_allreduce");
    double g = 0.0;
    for (double v : planes) g += v;
    return g;
}

result run(const options &o, slab &s, team &t, bool exchange, gpu_energy &energy) {
    const int me = hgas_rank_me(), n = hgas_rank_n(), nl = s.planes();
    const bool has_lo = exchange && me > 0, has_hi = exchange && me < n - 1;
    std::vector<double> planes(o.mimax - 2);
    std::optional<halo> h;  // collective allocation: every rank has the same `exchange`
    if (exchange) h.emplace(o.kind, s.plane_floats(), me);
    progress_poller poll(o.poll_us);
    s.init();
    result r;

    check(hgas_barrier(), "hgas_barrier");
    const double t0 = now(), c0 = cpu_seconds(), e0 = energy.read_joules();
    for (int it = 0; it < o.iters; ++it) {
        // Boundary planes first, so their new values travel while the interior is computed.
        s.sweep(t, 1, 2);
        if (nl > 1) s.sweep(t, nl, nl + 1);
        if (has_lo) h->send(me - 1, 1, it, s.wrk2_plane(1));
        if (has_hi) h->send(me + 1, 0, it, s.wrk2_plane(nl));
        if (nl > 2) s.sweep(t, 2, nl, o.poll_us > 0 && (has_lo || has_hi) ? &poll : nullptr);
        if (has_lo || has_hi) check(hgas_quiet(), "hgas_quiet");  // wrk2 planes are rewritten next sweep
        if (has_lo) s.set_halo(0, h->receive(0, it));
        if (has_hi) s.set_halo(nl + 1, h->receive(1, it));
        s.commit(t);
        if (exchange) r.gosa = global_gosa(s, planes);
    }
    const double t1 = now(), c1 = cpu_seconds(), e1 = energy.read_joules();
    if (!exchange) r.gosa = global_gosa(s, planes);

    const double mine = t1 - t0;
    check(hgas_allreduce(&r.seconds, &mine, 1, HGAS_DOUBLE, HGAS_OP_MAX), "hgas_allreduce");
    r.cpu_per_iter = (c1 - c0) / o.iters;
    // Ranks without a GPU of their own add 0; NaN anywhere makes the sum NaN (unavailable).
    const double de = energy.no_gpu_here() ? 0.0 : e1 - e0;
    check(hgas_allreduce(&r.energy_j, &de, 1, HGAS_DOUBLE, HGAS_OP_SUM), "hgas_allreduce");
    return r;
}

// Sum and hash of the whole field, every plane (boundaries included) in global order, on rank 0.
void field_checksum(slab &s, const options &o, double *sum, uint64_t *hash) {
    const int me = hgas_rank_me(), n = hgas_rank_n();
    std::vector<double> sums(o.mimax, 0.0);
    std::vector<uint64_t> hashes(o.mimax, 0);
    const int first = me == 0 ? 0 : 1, last = me == n - 1 ? s.planes() + 1 : s.planes();
    for (int l = first; l <= last; ++l) {
        sums[s.lo() - 1 + l] = s.plane_sum(l);
        hashes[s.lo() - 1 + l] = s.plane_hash(l);
    }
    check(hgas_reduce(sums.data(), sums.data(), sums.size(), HGAS_DOUBLE, HGAS_OP_SUM, 0), "hgas_reduce");
    check(hgas_reduce(hashes.data(), hashes.data(), hashes.size(), HGAS_UINT64, HGAS_OP_SUM, 0), "hgas_reduce");
    *sum = 0.0;
    *hash = 0xcbf29ce484222325ull;
    for (int i = 0; i < o.mimax; ++i) {
        *sum += sums[i];
        for (int b = 0; b < 8; ++b) *hash = (*hash ^ ((hashes[i] >> (8 * b)) & 0xff)) * 0x100000001b3ull;
    }
}

std::string num(double v) {
    if (!std::isfinite(v)) return "null";
    char b[40];
    std::snprintf(b, sizeof b, "%.17g", v);
    return b;
}

std::string hex(uint64_t v) {
    char b[24];
    std::snprintf(b, sizeof b, "\"%016llx\"", static_cast<unsigned long long>(v));
    return b;
}

uint64_t bits(double v) {
    uint64_t b;
    std::memcpy(&b, &v, sizeof b);
    return b;
}

int main_ranked(const options &o) {
    const int me = hgas_rank_me(), n = hgas_rank_n();
    if (n > o.mimax - 2) {
        if (me == 0)
            std::fprintf(stderr,
                         "himeno: size %s has %d interior planes along i but %d ranks: each rank needs at least one "
                         "plane; use at most %d ranks or a larger size\n",
                         o.size_name.c_str(), o.mimax - 2, n, o.mimax - 2);
        return 2;
    }
    const int local_n = hgas_local_n() > 0 ? hgas_local_n() : 1;
    int threads = o.threads;
    if (threads == 0) threads = std::max(1, int(std::thread::hardware_concurrency()) / local_n);

    int lo, hi;
    split_planes(o.mimax, n, me, &lo, &hi);
    slab *sp = nullptr;
    try {
        sp = new slab(o.mimax, o.mjmax, o.mkmax, lo, hi);
    } catch (const std::bad_alloc &) {
        std::string msg = "himeno: not enough memory for " + std::to_string(hi - lo + 2) + " planes of " +
                          std::to_string(o.mjmax) + "x" + std::to_string(o.mkmax) + " points x 14 arrays (" +
                          std::to_string((hi - lo + 2) * 56.0 * o.mjmax * o.mkmax / (1 << 30)) +
                          " GiB): use more ranks or a smaller size";
        hgas_abort(1, msg.c_str());
    }
    slab &s = *sp;
    team t(threads);
    gpu_energy energy(hgas_local_rank());
    // Energy counts only if every rank could read its GPU (or has none of its own to read).
    double ok = energy.available() || energy.no_gpu_here() ? 1.0 : 0.0, any = energy.available() ? 1.0 : 0.0;
    check(hgas_allreduce(&ok, &ok, 1, HGAS_DOUBLE, HGAS_OP_MIN), "hgas_allreduce");
    check(hgas_allreduce(&any, &any, 1, HGAS_DOUBLE, HGAS_OP_MAX), "hgas_allreduce");
    const bool have_energy = ok > 0 && any > 0;
    const std::string energy_note =
        have_energy ? "NVML total energy of the ranks' GPUs"
                    : "unavailable (" + (energy.why().empty() ? std::string("NVML failed on some rank") : energy.why()) + ")";

    const result main_run = run(o, s, t, o.exchange, energy);
    double sum = NAN;
    uint64_t hash = 0;
    if (o.checksum) field_checksum(s, o, &sum, &hash);
    result bare;
    if (o.overhead) bare = run(o, s, t, false, energy);

    // CPU time per sweep of every rank, in rank order.
    double *cpu_all = nullptr;
    check(hgas_malloc(sizeof(double) * n, reinterpret_cast<void **>(&cpu_all)), "hgas_malloc");
    check(hgas_fcollect(cpu_all, &main_run.cpu_per_iter, sizeof(double)), "hgas_fcollect");

    const double flop = 34.0 * (o.mimax - 3) * (o.mjmax - 3) * (o.mkmax - 3);  // per sweep, the reference formula
    const double per_iter = main_run.seconds / o.iters, mflops = flop * o.iters / main_run.seconds * 1e-6;
    const double energy_j = have_energy ? main_run.energy_j : NAN;
    const double mflop_per_j = have_energy ? flop * o.iters * 1e-6 / energy_j : NAN;
    const double overhead = o.overhead ? (main_run.seconds - bare.seconds) / o.iters : NAN;
    const std::optional<double> ref = reference_gosa(o.mimax, o.mjmax, o.mkmax, o.iters);
    const double rel = ref ? std::fabs(main_run.gosa - *ref) / std::fabs(*ref) : NAN;
    const bool verified = ref && rel <= 1e-5;
    int code = 0;

    if (me == 0) {
        std::string planes;
        for (int r = 0; r < n; ++r) {
            int a, b;
            split_planes(o.mimax, n, r, &a, &b);
            planes += (r ? "," : "") + std::to_string(b - a);
        }
        std::printf("himeno: size %s (%dx%dx%d), %d iterations, %d rank(s) (planes %s), %d thread(s)/rank, mode %s, "
                    "kind %s%s\n",
                    o.size_name.c_str(), o.mimax, o.mjmax, o.mkmax, o.iters, n, planes.c_str(), threads,
                    mode_name(o.mode), kind_name(o.kind), o.exchange ? "" : ", no exchange");
        std::printf("gosa: %.10e (bits %016llx)\n", main_run.gosa, static_cast<unsigned long long>(bits(main_run.gosa)));
        if (o.checksum)
            std::printf("checksum: sum %.17g hash %016llx\n", sum, static_cast<unsigned long long>(hash));
        std::printf("time: %.6f s, %.6f ms per iteration\n", main_run.seconds, per_iter * 1e3);
        std::printf("MFLOPS: %.2f\n", mflops);
        if (o.overhead)
            std::printf("comm overhead: %.6f ms per iteration (%.6f ms without exchange, %.1f%% of the time)\n",
                        overhead * 1e3, bare.seconds / o.iters * 1e3, 100.0 * overhead / per_iter);
        std::printf("cpu time per iteration (ms):");
        for (int r = 0; r < n; ++r) std::printf(" r%d %.4f", r, cpu_all[r] * 1e3);
        std::printf("\n");
        if (have_energy)
            std::printf("energy: %.3f J, %.2f MFLOP/J\n", energy_j, mflop_per_j);
        else
            std::printf("energy: %s\n", energy_note.c_str());
        if (o.verify) {
            if (!ref)
                std::printf("verify: no reference value for %dx%dx%d with %d iterations (REFERENCE.md has XS 1,3,64,100 "
                            "and S 1,3,10,64,100)\n",
                            o.mimax, o.mjmax, o.mkmax, o.iters);
            else
                std::printf("verify: %s: expected %.9e, got %.9e, relative error %.2e (tolerance 1e-05)\n",
                            verified ? "ok" : "MISMATCH", *ref, main_run.gosa, rel);
        }

        std::string cpu = "[";
        for (int r = 0; r < n; ++r) cpu += (r ? "," : "") + num(cpu_all[r]);
        cpu += "]";
        char host[256] = "";
        gethostname(host, sizeof host - 1);
        const char *transports = std::getenv("HGAS_TRANSPORTS");
        std::string json = std::string("{\"app\":\"himeno\",\"size\":\"") + o.size_name + "\",\"mimax\":" +
                           std::to_string(o.mimax) + ",\"mjmax\":" + std::to_string(o.mjmax) +
                           ",\"mkmax\":" + std::to_string(o.mkmax) + ",\"iters\":" + std::to_string(o.iters) +
                           ",\"mode\":\"" + mode_name(o.mode) + "\",\"kind\":\"" + kind_name(o.kind) +
                           "\",\"ranks\":" + std::to_string(n) + ",\"threads\":" + std::to_string(threads) +
                           ",\"planes\":[" + planes + "],\"exchange\":" + (o.exchange ? "true" : "false") +
                           ",\"poll_us\":" + std::to_string(o.poll_us) + ",\"gosa\":" + num(main_run.gosa) +
                           ",\"gosa_bits\":" + hex(bits(main_run.gosa)) + ",\"time_s\":" + num(main_run.seconds) +
                           ",\"time_per_iter_s\":" + num(per_iter) + ",\"flop_per_iter\":" + num(flop) +
                           ",\"mflops\":" + num(mflops) + ",\"time_per_iter_noexchange_s\":" +
                           (o.overhead ? num(bare.seconds / o.iters) : "null") +
                           ",\"comm_overhead_per_iter_s\":" + num(overhead) + ",\"cpu_time_per_iter_s\":" + cpu +
                           ",\"energy_j\":" + num(energy_j) + ",\"mflop_per_j\":" + num(mflop_per_j) +
                           ",\"energy_note\":\"" + energy_note + "\",\"checksum_sum\":" + num(sum) +
                           ",\"checksum_hash\":" + (o.checksum ? hex(hash) : "null") +
                           ",\"reference_gosa\":" + (ref ? num(*ref) : "null") + ",\"verified\":" +
                           (o.verify && ref ? (verified ? "true" : "false") : "null") + ",\"transports\":\"" +
                           (transports ? transports : "") + "\",\"host\":\"" + host + "\"}";
        std::printf("JSON %s\n", json.c_str());
        std::fflush(stdout);
        if (!o.json_path.empty()) {
            FILE *f = std::fopen(o.json_path.c_str(), "a");
            if (!f || std::fprintf(f, "%s\n", json.c_str()) < 0 || std::fclose(f) != 0) {
                std::fprintf(stderr, "himeno: cannot append to %s: %s\n", o.json_path.c_str(), std::strerror(errno));
                code = 1;
            }
        }
    }
    if (o.verify && !verified) code = 1;  // every rank knows gosa, so every rank agrees
    hgas_free(cpu_all);
    delete sp;
    return code;
}

}  // namespace
}  // namespace himeno

int main(int argc, char **argv) {
    using namespace himeno;
    // Bad options are found before the job forms, on every rank alike: only rank 0 speaks.
    const char *rank_env = std::getenv("HGAS_RANK");
    const bool loud = !rank_env || !std::strcmp(rank_env, "0");
    int code = 0;
    const std::optional<options> o = parse_options(argc, argv, loud, &code);
    if (!o) return code;
    if (o->mode != mode::cpu || o->kind == kind::cuda) {
        if (loud)
            std::fprintf(stderr, "himeno: %s %s is not built yet (this version has mode cpu with kind host or sim)\n",
                         o->mode != mode::cpu ? "mode" : "kind",
                         o->mode != mode::cpu ? mode_name(o->mode) : kind_name(o->kind));
        return 2;
    }
    if (hgas_init() != HGAS_OK) {
        std::fprintf(stderr, "himeno: hgas_init: %s\n", hgas_last_error());
        return 1;
    }
    const int rc = main_ranked(*o);
    if (hgas_finalize() != HGAS_OK && rc == 0) {
        std::fprintf(stderr, "himeno: hgas_finalize: %s\n", hgas_last_error());
        return 1;
    }
    return rc;
}
