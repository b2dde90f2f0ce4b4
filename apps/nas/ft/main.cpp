// nas-ft: NPB 3.4 FT on hgas. README.md in apps/nas describes options, output and design.
// This file checks the command line and the rank count, sizes hgas's heaps, runs, verifies
// against the NPB reference checksums and reports (NPB-style block and one JSON record).
#include <hgas/hgas.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "backend.hpp"
#include "energy.hpp"
#include "ft_run.hpp"
#include "grid2d.hpp"
#include "json.hpp"
#include "layout.hpp"
#include "options.hpp"
#include "rank_launch.hpp"
#include "report.hpp"
#include "util.hpp"

namespace ft {

// Defined by cuda_backend.cu (or cuda_none.cpp): the rank's GPU for NVML, and whether this rank
// is the one of its node that counts that GPU's energy.
std::string cuda_pci_bus_id(bool *counts);
// The smallest total memory of this node's GPUs; false where there is none (or no CUDA).
bool cuda_memory_total(size_t *bytes);

namespace {

// Sets a heap size variable to `bytes` (rounded up to MiB) unless the user set it.
void size_heap(const char *var, size_t bytes) {
    if (std::getenv(var)) return;
    const std::string v = std::to_string((bytes + (1u << 20) - 1) >> 20) + "M";
    setenv(var, v.c_str(), 0);
}

// What one rank's arrays take (ft_run.cpp's allocate(), ft_run2d.cpp) on `n` ranks: the symmetric
// heaps hgas maps at start and the plain host arrays. Bytes, for the largest share (rank 0).
struct memory_plan {
    size_t host_heap = 0, sim_heap = 0, cuda_heap = 0, host_arrays = 0;
    size_t host_total() const { return host_heap + sim_heap + host_arrays; }  // sim memory is host memory
};

memory_plan plan_memory(const options &o, int n) {
    const problem &p = o.prob;
    const size_t c = sizeof(cplx), slack = size_t(64) << 20;  // slack: hgas's own use and alignment
    memory_plan m;
    if (o.p2 > 1) {  // 2-D: only the two receive buffers are symmetric
        grid2d g(p.nx, p.ny, p.nz, o.p1, o.p2, 0);
        const size_t recv = (size_t(o.p2) * g.row_block() + size_t(o.p1) * g.col_block()) * c;
        const size_t send = std::max(size_t(o.p2) * g.row_block(), size_t(o.p1) * g.col_block()) * c;
        (o.mem == kind::sim ? m.sim_heap : m.host_heap) = recv + slack;
        m.host_arrays = (g.a_elems() + g.b_elems() + 2 * g.c_elems()) * c + send + (o.mem == kind::sim ? recv : 0);
        return m;
    }
    layout l(p.nx, p.ny, p.nz, n, 0);
    const size_t nb = size_t(n) * l.block_elems() * c;
    const size_t pencil = l.pencil_elems() * c, slab = l.slab_elems() * c;
    const bool packed = o.var == variant::packed, staged = !packed && n > 1;  // staged: ft_run.cpp's batched()
    const size_t arrays = pencil + slab + pencil + (packed ? 2 * nb : 0);  // host and cuda kinds
    if (o.mem == kind::host) m.host_heap = arrays + slack;
    if (o.mem == kind::cuda) m.cuda_heap = arrays + (staged ? nb : 0) + slack;
    if (o.mem == kind::sim) {
        m.sim_heap = pencil + slab + (packed ? nb : 0) + slack;
        m.host_arrays = 2 * pencil + slab + (packed || staged ? nb : 0);
    }
    return m;
}

// Sets the heap sizes for the plan before hgas_init reads them.
void size_heaps(const options &o, int n) {
    const memory_plan m = plan_memory(o, n);
    if (m.host_heap) size_heap("HGAS_HEAP_SIZE", m.host_heap);
    if (m.cuda_heap) size_heap("HGAS_CUDA_HEAP_SIZE", m.cuda_heap);
    if (m.sim_heap) size_heap("HGAS_SIM_HEAP_SIZE", m.sim_heap);
}

std::string gib(size_t b) {
    char t[32];
    std::snprintf(t, sizeof t, "%.1f GiB", double(b) / double(size_t(1) << 30));
    return t;
}

// Host memory still available on this node (MemAvailable), and what one process may map
// (ulimit -v); SIZE_MAX where unknown or unlimited.
size_t node_available() {
    size_t avail = SIZE_MAX;
    if (FILE *f = std::fopen("/proc/meminfo", "r")) {
        char line[256];
        unsigned long long kb = 0;
        while (std::fgets(line, sizeof line, f))
            if (std::sscanf(line, "MemAvailable: %llu kB", &kb) == 1) avail = size_t(kb) << 10;
        std::fclose(f);
    }
    return avail;
}
size_t process_limit() {
    struct rlimit rl;
    return getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY ? size_t(rl.rlim_cur) : SIZE_MAX;
}

// Refuses a run whose arrays cannot fit, before anything is allocated (a heap larger than the
// memory would otherwise be mapped and fail on first touch). `ranks_here`: ranks sharing this
// node's memory (before hgas_init: the process's, a lower bound). Returns the message, or "" when it fits.
std::string memory_refusal(const options &o, int n, int ranks_here) {
    const problem &p = o.prob;
    const memory_plan m = plan_memory(o, n);
    const std::string what = "nas-ft: class " + std::string(1, p.cls) + " on " + std::to_string(n) + " rank(s) (" +
                             variant_name(o.var) + ", kind " + kind_name(o.mem) + ") needs about ";
    const std::string advice = "; use more ranks (more nodes), or a machine with more memory (README.md, \"Memory\")";
    const size_t per = m.host_total(), lim = process_limit(), avail = node_available();
    if (per > lim)
        return what + gib(per) + " of host memory per rank, but a process may map " + gib(lim) + " (ulimit -v)" +
               advice;
    if (per * size_t(ranks_here) > avail)
        return what + gib(per) + " of host memory per rank, " + gib(per * size_t(ranks_here)) + " for the " +
               std::to_string(ranks_here) + " rank(s) on this node, but " + gib(avail) + " is available" + advice;
    size_t gpu = 0;
    if (m.cuda_heap && cuda_memory_total(&gpu) && m.cuda_heap > gpu)
        return what + gib(m.cuda_heap) + " of GPU memory per rank, but this node's GPU has " + gib(gpu) + advice;
    return "";
}

bool kind_everywhere(kind k) {
    if (k == kind::host) return true;
    double ok = hgas_kind_available(k == kind::cuda ? HGAS_KIND_CUDA : HGAS_KIND_SIM) ? 1.0 : 0.0;
    nas::check(hgas_allreduce(&ok, &ok, 1, HGAS_DOUBLE, HGAS_OP_MIN), "hgas_allreduce");
    if (ok > 0) return true;
    if (hgas_rank_me() == 0)
        std::fprintf(stderr, "%s",
                     k == kind::cuda ? "nas-ft: --kind cuda needs hgas cuda memory on every rank, and some rank has "
                                       "none (no CUDA device visible, hgas built without CUDA, or "
                                       "HGAS_CUDA_HEAP_SIZE=0; hgas-info says which)\n"
                                     : "nas-ft: --kind sim needs hgas sim memory on every rank (HGAS_SIM_HEAP_SIZE "
                                       "was set to 0?)\n");
    return false;
}

int main_ranked(const options &o) {
    const int me = hgas_rank_me(), n = hgas_rank_n();
    const problem &p = o.prob;
    if (!kind_everywhere(o.mem)) return 1;
    {
        // Now that the ranks on this node are known: do all their arrays fit its memory? (The
        // heaps are mapped but not yet touched.) One answer for all, so that all stop alike.
        const std::string no = memory_refusal(o, n, hgas_local_n());
        double ok = no.empty() ? 1 : 0;
        nas::check(hgas_allreduce(&ok, &ok, 1, HGAS_DOUBLE, HGAS_OP_MIN), "hgas_allreduce");
        if (!no.empty() && hgas_local_rank() == 0) std::fprintf(stderr, "%s (rank %d)\n", no.c_str(), me);
        if (ok < 1) return 1;
    }

    std::string pci;
    bool counts = false;
    if (o.mem == kind::cuda) pci = cuda_pci_bus_id(&counts);
    nas::gpu_energy meter(pci, hgas_local_rank(), o.mem == kind::cuda ? counts : false);
    const double j0 = meter.read_joules();
    run_result r = run_ft(o);
    const double j1 = meter.read_joules();
    std::string energy_note = "not measured: kind " + std::string(kind_name(o.mem)) + " does not use a GPU";
    double energy = NAN;
    if (o.mem == kind::cuda) energy = nas::sum_energy(meter, j0, j1, &energy_note);

    // Verification: every iteration's checksum within the NPB tolerance.
    bool verified = !p.ref.empty() && int(p.ref.size()) >= p.niter;
    std::vector<double> err(p.niter, NAN);
    for (int i = 0; i < p.niter; ++i) {
        if (i < int(p.ref.size())) err[i] = std::abs((r.sums[i] - p.ref[i]) / p.ref[i]);
        if (!(err[i] <= kEpsilon)) verified = false;
    }

    // Per-rank figures in rank order.
    const int nf = 7;
    double mine[nf] = {r.ph.compute, r.ph.pack, r.ph.comm, r.ph.wait, r.ph.transpose(), r.cpu_seconds, r.fft_seconds};
    double *all = nullptr;
    nas::check(hgas_malloc(sizeof(double) * nf * n, reinterpret_cast<void **>(&all)), "hgas_malloc");
    nas::check(hgas_fcollect(all, mine, sizeof mine), "hgas_fcollect");
    int code = verified ? 0 : 1;
    if (me == 0) {
        const double N = double(p.nx) * p.ny * p.nz;
        const double mops = 1e-6 * N *
                            (14.8157 + 7.19641 * std::log(N) + (5.23518 + 7.21113 * std::log(N)) * p.niter) /
                            r.seconds;
        std::printf("\n NAS Parallel Benchmarks (NPB 3.4) - FT Benchmark on hgas\n\n");
        std::printf(" Size                : %4dx%4dx%4d\n", p.nx, p.ny, p.nz);
        std::printf(" Iterations          :     %7d\n", p.niter);
        std::printf(" Number of processes :     %7d\n", n);
        std::printf(" Variant             : %s, kind %s, %s\n", variant_name(o.var), kind_name(o.mem), r.backend.c_str());
        std::printf(" Process grid        : %dx%d (%s)\n", o.p1, o.p2, o.p2 > 1 ? "2-D, pencils" : "1-D, slabs");
        for (int i = 0; i < p.niter; ++i)
            std::printf(" T = %4d     Checksum = %22.12e %22.12e\n", i + 1, r.sums[i].real(), r.sums[i].imag());
        if (p.ref.empty())
            std::printf(" Verification: no reference checksums for this size\n");
        else
            for (int i = 0; i < p.niter; ++i)
                if (!(err[i] <= kEpsilon))
                    std::printf(" Verification FAILED at T = %d: expected %.12e %.12e, relative error %.3e > %.0e\n",
                                i + 1, p.ref[i].real(), p.ref[i].imag(), err[i], kEpsilon);
        nas::npb_summary s;
        s.name = "FT";
        s.cls = p.cls;
        s.nx = p.nx;
        s.ny = p.ny;
        s.nz = p.nz;
        s.niter = p.niter;
        s.seconds = r.seconds;
        s.mops = mops;
        s.ranks = n;
        s.threads = r.threads;
        s.optype = "floating point";
        s.verified = verified;
        s.verifiable = !p.ref.empty();
        s.kind = kind_name(o.mem);
        s.variant = variant_name(o.var);
        nas::print_npb(s);

        auto column = [&](int f) {
            std::vector<double> v(n);
            for (int k = 0; k < n; ++k) v[k] = all[k * nf + f];
            return v;
        };
        auto maxof = [](const std::vector<double> &v) { return *std::max_element(v.begin(), v.end()); };
        const auto compute = column(0), pack = column(1), comm = column(2), wait = column(3), transpose = column(4),
                   cpu = column(5), fft = column(6);
        std::printf(" Phases (s, slowest rank): compute %.4f (FFT %.4f), transpose %.4f = pack %.4f + "
                    "communication %.4f + wait %.4f\n",
                    maxof(compute), maxof(fft), maxof(transpose), maxof(pack), maxof(comm), maxof(wait));
        const double fft_per_3d = maxof(fft) / (p.niter + 1);
        if (r.peer_3d_seconds > 0)
            std::printf(" FFT time / cuFFT time: %.3f (%.4f s per 3-D transform here, cuFFT's own 3-D plan "
                        "%.4f s)\n",
                        fft_per_3d / r.peer_3d_seconds, fft_per_3d, r.peer_3d_seconds);
        if (std::isfinite(energy))
            std::printf(" GPU energy: %.3f J (%.1f Mop/J)\n", energy, mops * r.seconds / energy);
        else
            std::printf(" GPU energy: %s\n", energy_note.c_str());

        char host[256] = "";
        gethostname(host, sizeof host - 1);
        std::vector<double> re, im, rre, rim;
        for (const cplx &c : r.sums) {
            re.push_back(c.real());
            im.push_back(c.imag());
        }
        nas::json_record j;
        j.add("app", "nas-ft").add("class", std::string(1, p.cls)).add("nx", p.nx).add("ny", p.ny).add("nz", p.nz);
        j.add("niter", p.niter).add("ranks", n).add("threads", r.threads).add("kind", kind_name(o.mem));
        j.add("variant", variant_name(o.var))
            .add("grid", std::to_string(o.p1) + "x" + std::to_string(o.p2)).add("backend", r.backend).add("time_s", r.seconds).add("mops", mops);
        j.add("mops_per_rank", mops / n).add("verified", verified).add("checksum_re", re).add("checksum_im", im);
        j.add("rel_err", err).add("compute_s", compute).add("fft_s", fft).add("pack_s", pack).add("comm_s", comm);
        j.add("wait_s", wait).add("transpose_s", transpose).add("cpu_s", cpu);
        j.add("fft_per_3d_s", fft_per_3d);
        if (r.peer_3d_seconds > 0)
            j.add("cufft_3d_s", r.peer_3d_seconds).add("fft_over_cufft", fft_per_3d / r.peer_3d_seconds);
        else
            j.add_null("cufft_3d_s").add_null("fft_over_cufft");
        j.add("energy_j", energy).add("energy_note", energy_note).add("perturbed", o.perturb);
        const char *transports = std::getenv("HGAS_TRANSPORTS");
        j.add("transports", transports ? transports : "").add("host", host);
        if (!j.emit(o.json_path) && code == 0) code = 1;
    }
    hgas_free(all);
    return code;
}

}  // namespace
}  // namespace ft

int main(int argc, char **argv) {
    using namespace ft;
    nas::set_program("nas-ft");
    // Bad options are found before the job forms, on every rank alike: only rank 0 speaks.
    const char *rank_env = std::getenv("HGAS_RANK");
    const bool loud = !rank_env || !std::strcmp(rank_env, "0");
    int code = 0;
    const std::optional<options> o = parse_options(argc, argv, loud, &code);
    if (!o) return code;
    const char *size_env = std::getenv("HGAS_SIZE");
    // HGAS_SIZE counts processes; with ranks as threads each has HGAS_THREADS ranks.
    const int n = size_env ? std::atoi(size_env) * apps::ranks_per_process() : 1;
    const problem &p = o->prob;
    // The process grid: 1-D (slabs) while every rank can hold a z-plane and a y-row, else 2-D.
    options run = *o;
    std::string why;
    if (!choose_grid(p.nx, p.ny, p.nz, std::max(n, 1), o->want_p1, o->want_p2, &run.p1, &run.p2, &why)) {
        if (loud) std::fprintf(stderr, "nas-ft: class %c: %s\n", p.cls, why.c_str());
        return 2;
    }
    if (run.p2 > 1 && run.mem == kind::cuda) {
        if (loud)
            std::fprintf(stderr,
                         "nas-ft: class %c on %d ranks needs the 2-D decomposition (grid %dx%d), which runs with "
                         "--kind host or sim; --kind cuda takes at most min(nz, ny) = %d ranks\n",
                         p.cls, n, run.p1, run.p2, std::min(p.nz, p.ny));
        return 2;
    }
    if (n > 0) {
        // Every rank alike, before the job forms: this process's ranks' shares must fit this
        // node at least (one, or HGAS_THREADS with ranks as threads).
        const std::string no = memory_refusal(run, n, apps::ranks_per_process());
        if (!no.empty()) {
            if (loud) std::fprintf(stderr, "%s\n", no.c_str());
            return 1;
        }
        size_heaps(run, n);
    }
    // Ranks as threads (hgasrun --threads T): every thread runs the program as its own rank;
    // the options above are read once and only read after (a rank keeps the rest to itself).
    return apps::run_ranks("nas-ft", [&] { return main_ranked(run); });
}
