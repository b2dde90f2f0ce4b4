// nas-mg: the NAS Parallel Benchmark MG (NPB 3.4) on hgas: V-cycle multigrid on a periodic
// 2^k grid split in 3-D over the ranks, ghost layers exchanged by put-with-signal. README.md
// in apps/nas describes it. This file reads the options, runs NPB's timed section and reports.
#include <hgas/hgas.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "backend.hpp"
#include "comm.hpp"
#include "energy.hpp"
#include "json.hpp"
#include "rank_launch.hpp"
#include "report.hpp"
#include "util.hpp"
#include "vcycle.hpp"

namespace mg {
namespace {

const char k_usage[] = R"(usage: hgasrun -n N nas-mg [options]

  --class S|W|A|B|C|D   NPB problem class (default S): grid 32^3, 128^3, 256^3, 256^3, 512^3,
                        1024^3 with 4, 4, 4, 20, 20, 50 iterations
  --kind host|sim|cuda  where the grids live and the operators run: host (the CPU; halo
                        buffers in hgas host memory), sim (the CPU; halo buffers in hgas sim
                        memory, read back with hgas_get), cuda (grids in hgas's cuda heap, CUDA
                        kernels, halos put from device memory); default host
  --threads T           compute threads per rank with --kind host or sim (default: the node's
                        cores / the ranks on it, at least 1)
  --iterations K        V-cycles instead of the class's count (NPB's mg.input override: the
                        class's reference value no longer applies, so verification fails)
  --json FILE           append the run's JSON record to FILE
  -h, --help            this text
N must be a power of two (the grid is split evenly in 3-D); exit status 0 when verification
succeeds, 1 when it fails or the run does, 2 for bad options.
)";

// NPB 3.4's classes: grid points per dimension, iterations, the reference rnm2.
struct npb_class {
    char name;
    int n, nit;
    double rnm2;
};
constexpr npb_class k_classes[] = {
    {'S', 32, 4, 0.5307707005734e-04},   {'W', 128, 4, 0.6467329375339e-05},
    {'A', 256, 4, 0.2433365309069e-05},  {'B', 256, 20, 0.1800564401355e-05},
    {'C', 512, 20, 0.5706732285740e-06}, {'D', 1024, 50, 0.1583275060440e-09},
};
constexpr double k_epsilon = 1e-8;  // NPB's verification tolerance (relative)

struct options {
    npb_class cls = k_classes[0];
    int nit = 0;
    int threads = 0;  // 0: cores / local ranks
    kind kd = kind::host;
    std::string json;
};

std::optional<options> parse(int argc, char **argv, bool loud, int *code) {
    options o;
    auto bad = [&](const std::string &msg) {
        if (loud) std::fprintf(stderr, "nas-mg: %s (nas-mg --help)\n", msg.c_str());
        *code = 2;
        return std::nullopt;
    };
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "-h" || a == "--help") {
            if (loud) std::fputs(k_usage, stdout);
            *code = 0;
            return std::nullopt;
        }
        if (a != "--class" && a != "--kind" && a != "--iterations" && a != "--threads" && a != "--json")
            return bad("unknown option '" + a + "'");
        if (i + 1 >= argc) return bad(a + " wants a value");
        const std::string v = argv[++i];
        if (a == "--class") {
            bool found = false;
            for (const npb_class &c : k_classes)
                if (v.size() == 1 && std::toupper(static_cast<unsigned char>(v[0])) == c.name) {
                    o.cls = c;
                    found = true;
                }
            if (!found) return bad("--class wants S, W, A, B, C or D, not '" + v + "'");
        } else if (a == "--kind") {
            if (v == "host") o.kd = kind::host;
            else if (v == "sim") o.kd = kind::sim;
            else if (v == "cuda") o.kd = kind::cuda;
            else return bad("--kind wants host, sim or cuda, not '" + v + "'");
        } else if (a == "--iterations") {
            char *end = nullptr;
            const long n = std::strtol(v.c_str(), &end, 10);
            if (v.empty() || *end || n < 1 || n > 100000) return bad("--iterations wants a count from 1 to 100000, not '" + v + "'");
            o.nit = int(n);
        } else if (a == "--threads") {
            char *end = nullptr;
            const long n = std::strtol(v.c_str(), &end, 10);
            if (v.empty() || *end || n < 1 || n > 1024) return bad("--threads wants a count from 1 to 1024, not '" + v + "'");
            o.threads = int(n);
        } else {
            o.json = v;
        }
    }
    if (o.nit == 0) o.nit = o.cls.nit;
    return o;
}

int lg2(int n) {
    int k = 0;
    while ((1 << k) < n) ++k;
    return k;
}

// Every rank has the memory kind the run needs; rank 0 says what is missing. Collective.
bool all_ranks_have(kind k) {
    if (k == kind::host) return true;
    double ok = hgas_kind_available(k == kind::cuda ? HGAS_KIND_CUDA : HGAS_KIND_SIM) ? 1.0 : 0.0;
    nas::check(hgas_allreduce(&ok, &ok, 1, HGAS_DOUBLE, HGAS_OP_MIN), "hgas_allreduce");
    if (ok > 0) return true;
    if (hgas_rank_me() == 0)
        std::fprintf(stderr, "%s",
                     k == kind::cuda ? "nas-mg: kind cuda needs hgas cuda memory on every rank, and some rank has none "
                                       "(no CUDA device visible, hgas built without CUDA, or HGAS_CUDA_HEAP_SIZE=0; "
                                       "hgas-info says which)\n"
                                     : "nas-mg: kind sim needs hgas's sim memory on every rank: set "
                                       "HGAS_SIM_HEAP_SIZE (e.g. 64M)\n");
    return false;
}

std::vector<double> gather_all(double v) {
    const int n = hgas_rank_n();
    double *all = nullptr;
    nas::check(hgas_malloc(sizeof(double) * n, reinterpret_cast<void **>(&all)), "hgas_malloc");
    nas::check(hgas_fcollect(all, &v, sizeof(double)), "hgas_fcollect");
    std::vector<double> out(all, all + n);
    nas::check(hgas_free(all), "hgas_free");
    return out;
}

// Bytes of one rank's grids (solver's u and r at every level, v, the gathered level) and halo
// receive buffers (exchange) on `ranks` ranks, for the largest block; 0 when the count does not
// fit (run() then says why).
size_t grid_bytes(const options &o, int ranks) {
    decomp d;
    std::string why;
    if (!decomp::make(lg2(o.cls.n), ranks, 0, &d, &why)) return 0;
    auto count = [&](int k, bool whole) {
        const size_t w = (size_t(1) << k) + 2;
        return whole ? w * w * w
                     : size_t(d.local(k, 0) + 2) * size_t(d.local(k, 1) + 2) * size_t(d.local(k, 2) + 2);
    };
    size_t n = count(d.lt, false);  // v
    for (int l = 1; l <= d.lt; ++l) n += 2 * count(l, !d.split(l));
    if (d.kd > 1) n += count(d.kd, true);
    if (ranks > 1) {
        const size_t a = d.local(d.lt, 0) + 2, b = d.local(d.lt, 1) + 2, c = d.local(d.lt, 2) + 2;
        n += 12 * std::max({a * b, a * c, b * c});
    }
    return n * sizeof(double);
}

int run(const options &o) {
    const int me = hgas_rank_me(), ranks = hgas_rank_n();
    decomp d;
    std::string why;
    if (!decomp::make(lg2(o.cls.n), ranks, me, &d, &why)) {
        if (me == 0) std::fprintf(stderr, "nas-mg: class %c on %d ranks: %s\n", o.cls.name, ranks, why.c_str());
        return 2;
    }
    if (!all_ranks_have(o.kd)) return 1;
    std::unique_ptr<backend> be;
    if (o.kd == kind::cuda) {
        be = make_cuda_backend(&why);
        double ok = be ? 1.0 : 0.0;
        nas::check(hgas_allreduce(&ok, &ok, 1, HGAS_DOUBLE, HGAS_OP_MIN), "hgas_allreduce");
        if (!be) std::fprintf(stderr, "nas-mg: rank %d: kind cuda: %s\n", me, why.c_str());
        if (ok < 1) return 1;
    } else {
        const int local = hgas_local_n() > 0 ? hgas_local_n() : 1;
        be = make_host_backend(o.threads ? o.threads : std::max(1, int(std::thread::hardware_concurrency()) / local));
    }
    // Operator A and smoother S of NPB (S: classes S, W, A; the other set from class B on).
    const double a[4] = {-8.0 / 3.0, 0.0, 1.0 / 6.0, 1.0 / 12.0};
    const bool small = o.cls.name == 'S' || o.cls.name == 'W' || o.cls.name == 'A';
    const double c[4] = {small ? -3.0 / 8.0 : -3.0 / 17.0, small ? 1.0 / 32.0 : 1.0 / 33.0,
                         small ? -1.0 / 64.0 : -1.0 / 61.0, 0.0};
    const bool on_gpu = o.kd == kind::cuda;
    std::optional<nas::gpu_energy> energy;
    if (on_gpu) energy.emplace(be->pci_bus_id(), 0, be->counts_energy());

    double rnm2 = 0, rnmu = 0, seconds = 0, cpu = 0, e0 = NAN, e1 = NAN;
    phases ph;
    {
        solver s(*be, d, o.kd, a, c);
        phases untimed;
        s.init_rhs(untimed);
        // NPB: one untimed V-cycle first (pages, caches, the GPU's first launches), then the
        // restart from u = 0 (v, the right-hand side, is not changed by a V-cycle).
        s.residual(untimed);
        s.norm2(&rnmu, untimed);
        s.vcycle(untimed);
        s.residual(untimed);
        s.zero_u();
        nas::check(hgas_barrier(), "hgas_barrier");
        if (energy) e0 = energy->read_joules();
        const double t0 = nas::now(), c0 = nas::cpu_seconds();
        s.residual(ph);
        s.norm2(&rnmu, ph);
        for (int it = 0; it < o.nit; ++it) {
            s.vcycle(ph);
            s.residual(ph);
        }
        rnm2 = s.norm2(&rnmu, ph);
        const double mine = nas::now() - t0;
        cpu = nas::cpu_seconds() - c0;
        if (energy) e1 = energy->read_joules();
        nas::check(hgas_allreduce(&seconds, &mine, 1, HGAS_DOUBLE, HGAS_OP_MAX), "hgas_allreduce");
    }
    std::string energy_note = "kind " + std::string(kind_name(o.kd)) + ": no GPU in the run";
    const double joules = energy ? nas::sum_energy(*energy, e0, e1, &energy_note) : NAN;
    const std::vector<double> t_compute = gather_all(ph.compute), t_comm = gather_all(ph.comm),
                              t_wait = gather_all(ph.wait), t_cpu = gather_all(cpu);

    const double err = std::fabs(rnm2 - o.cls.rnm2) / o.cls.rnm2;
    const bool verified = err <= k_epsilon;
    const double n = o.cls.n, mops = 58.0 * o.nit * n * n * n * 1e-6 / seconds;
    if (me == 0) {
        std::printf(" NAS Parallel Benchmarks (NPB 3.4 on hgas) - MG Benchmark\n\n");
        std::printf(" Size: %4dx%4dx%4d  (class %c)\n", o.cls.n, o.cls.n, o.cls.n, o.cls.name);
        std::printf(" Iterations: %d\n", o.nit);
        std::printf(" Number of processes: %d (grid %dx%dx%d, levels 1..%d replicated)\n", ranks, d.p[0], d.p[1],
                    d.p[2], d.kd - 1);
        std::printf(" Kind: %s%s%s\n", kind_name(o.kd), on_gpu ? ", " : "", on_gpu ? be->device().c_str() : "");
        std::printf(" Memory per rank: %.1f MB (grids of every level and halo buffers, the largest block)\n",
                    double(grid_bytes(o, ranks)) * 1e-6);
        std::printf("\n L2 Norm is %20.13e\n", rnm2);
        if (verified) {
            std::printf(" Error is   %20.13e\n", err);
        } else {
            std::printf(" The correct L2 Norm is %20.13e (class %c, %d iterations)\n", o.cls.rnm2, o.cls.name,
                        o.cls.nit);
            std::printf(" Relative error %20.13e exceeds %.0e\n", err, k_epsilon);
        }
        nas::npb_summary sum;
        sum.name = "MG";
        sum.cls = o.cls.name;
        sum.nx = sum.ny = sum.nz = o.cls.n;
        sum.niter = o.nit;
        sum.seconds = seconds;
        sum.mops = mops;
        sum.ranks = ranks;
        sum.threads = be->threads();
        sum.optype = "floating point";
        sum.verified = verified;
        sum.kind = kind_name(o.kd);
        nas::print_npb(sum);
        std::printf(" Phases (max over ranks, s): compute %.4f, communication %.4f, wait %.4f\n",
                    *std::max_element(t_compute.begin(), t_compute.end()),
                    *std::max_element(t_comm.begin(), t_comm.end()), *std::max_element(t_wait.begin(), t_wait.end()));
        if (std::isfinite(joules))
            std::printf(" GPU energy: %.3f J\n", joules);
        else
            std::printf(" GPU energy: %s\n", energy_note.c_str());

        char host[256] = "";
        gethostname(host, sizeof host - 1);
        const char *transports = std::getenv("HGAS_TRANSPORTS");
        nas::json_record j;
        j.add("app", "nas-mg").add("class", std::string(1, o.cls.name)).add("n", o.cls.n).add("iterations", o.nit)
            .add("ranks", ranks).add("threads", be->threads())
            .add_raw("proc_grid", "[" + std::to_string(d.p[0]) + "," + std::to_string(d.p[1]) + "," +
                                      std::to_string(d.p[2]) + "]")
            .add("replicated_levels", d.kd - 1).add("kind", kind_name(o.kd)).add("time_s", seconds)
            .add("mops", mops).add("mops_per_rank", mops / ranks)
            .add("grid_bytes_per_rank", double(grid_bytes(o, ranks))).add("rnm2", rnm2).add("rnmu", rnmu)
            .add("reference_rnm2", o.cls.rnm2).add("relative_error", err).add("verified", verified)
            .add("compute_s", t_compute).add("communication_s", t_comm).add("wait_s", t_wait)
            .add("cpu_s", t_cpu).add("energy_j", joules).add("energy_note", energy_note)
            .add("device", be->device()).add("transports", transports ? transports : "").add("host", host);
        if (!j.emit(o.json)) return 1;
    }
    return verified ? 0 : 1;
}

}  // namespace
}  // namespace mg

int main(int argc, char **argv) {
    nas::set_program("nas-mg");
    // Bad options are found before the job forms, on every rank alike: only rank 0 speaks.
    const char *rank_env = std::getenv("HGAS_RANK");
    const bool loud = !rank_env || !std::strcmp(rank_env, "0");
    int code = 0;
    const std::optional<mg::options> o = mg::parse(argc, argv, loud, &code);
    if (!o) return code;
    // Kind cuda: the grids live in the cuda heap; size it for them (class C on one rank: 3.6 GB)
    // unless the user set it.
    const char *size_env = std::getenv("HGAS_SIZE");
    const size_t grids = mg::grid_bytes(*o, size_env ? std::max(1, std::atoi(size_env)) * apps::ranks_per_process() : 1);
    if (o->kd == mg::kind::cuda && grids && !std::getenv("HGAS_CUDA_HEAP_SIZE")) {
        const std::string v = std::to_string((grids + (size_t(64) << 20) + (1u << 20) - 1) >> 20) + "M";
        setenv("HGAS_CUDA_HEAP_SIZE", v.c_str(), 0);
    }
    // Ranks as threads (hgasrun --threads T): every thread runs the program as its own rank;
    // the options above are read once and only read after (a rank keeps the rest to itself).
    return apps::run_ranks("nas-mg", [&] { return mg::run(*o); });
}
