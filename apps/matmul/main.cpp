// matmul: C = A·B with A, B and C distributed shared arrays of host, sim or GPU memory, each
// rank computing its own tiles of C from tiles fetched with non-blocking gets (README.md).
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "multiply.hpp"

namespace matmul {
namespace {

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

// processes in the job: ranks that share a (node, pid) are threads of one process
int count_processes() {
    const int p = hgas_rank_n();
    void *all = nullptr;
    if (hgas_malloc(static_cast<size_t>(p) * 8, &all) != HGAS_OK) return -1;
    const uint64_t mine = (static_cast<uint64_t>(hgas_node_me()) << 32) | static_cast<uint32_t>(getpid());
    int n = -1;
    if (hgas_fcollect(all, &mine, 8) == HGAS_OK) {
        const uint64_t *v = static_cast<const uint64_t *>(all);
        n = static_cast<int>(std::set<uint64_t>(v, v + p).size());
    }
    hgas_free(all);
    return n;
}

// GPUs the job's ranks use: each rank counts 1 / (ranks sharing its GPU)
double count_gpus() {
    double mine = 1.0 / std::max(1, hgas_team_n(HGAS_TEAM_GPU)), sum = 0;
    if (hgas_allreduce(&sum, &mine, 1, HGAS_DOUBLE, HGAS_OP_SUM) != HGAS_OK) return 0;
    return sum;
}

struct result {
    std::vector<double> times;
    double wait_max = 0;
    uint64_t fetched_max = 0, fetched_sum = 0;
};

void write_json(const options &o, const arrays &m, const engine &e, int procs, double gpus, const result &r,
                const check &c, int blas_threads) {
    FILE *f = std::fopen(o.json.c_str(), "a");
    if (!f) {
        std::fprintf(stderr, "matmul: cannot append to --json %s: %s\n", o.json.c_str(), std::strerror(errno));
        return;
    }
    const double flop = 2.0 * o.n * o.n * o.n;
    const double best = *std::min_element(r.times.begin(), r.times.end());
    double mean = 0;
    for (double t : r.times) mean += t / r.times.size();
    const int p = hgas_rank_n();
    std::fprintf(f,
                 "{\"app\": \"matmul\", \"kind\": \"%s\", \"n\": %llu, \"block\": %llu, \"ranks\": %d, \"processes\": %d, "
                 "\"threads\": %d, \"gpus\": %.3g, \"library\": \"%s\", \"blas_threads\": %d, \"reps\": %d, "
                 "\"time_s\": %.6g, \"time_mean_s\": %.6g, \"gflops\": %.6g, \"wait_max_s\": %.6g, "
                 "\"fetched_bytes_max\": %llu, \"fetched_bytes_total\": %llu",
                 hgas_kind_name(o.kind), static_cast<unsigned long long>(o.n), static_cast<unsigned long long>(o.block), p,
                 procs, procs > 0 ? p / procs : 0, gpus, e.library(), blas_threads, o.reps, best, mean, flop / best * 1e-9,
                 r.wait_max, static_cast<unsigned long long>(r.fetched_max), static_cast<unsigned long long>(r.fetched_sum));
    if (o.verify && c.error.empty()) {
        const double ref = flop / c.ref_s * 1e-9, per = gpus > 0 && o.kind == HGAS_KIND_CUDA ? gpus : 1;
        std::fprintf(f,
                     ", \"ref_time_s\": %.6g, \"ref_gflops\": %.6g, \"ratio\": %.4f, \"ratio_per_gpu\": %.4f, "
                     "\"max_rel_err\": %.3e, \"bound\": %.3e, \"verified\": %s",
                     c.ref_s, ref, flop / best * 1e-9 / ref, flop / best * 1e-9 / per / ref, c.max_rel_err, c.bound,
                     c.ok ? "true" : "false");
    } else {
        std::fprintf(f, ", \"verified\": null");
    }
    std::fprintf(f, "}\n");
    std::fclose(f);
}

int run(int argc, char **argv) {
    options o;
    int code = 0;
    if (!parse(argc, argv, o, &code)) return code;
    const int me = hgas_rank_me(), p = hgas_rank_n();
    // A failure on one rank ends the job (the others may be waiting for it in a collective);
    // hgas_abort names the rank.
    auto fail = [&](const std::string &why) {
        hgas_abort(1, ("matmul: " + why).c_str());
        return 1;
    };
    if (o.kind == HGAS_KIND_SIM && !hgas_kind_available(HGAS_KIND_SIM))
        return fail("--kind sim: hgas has no sim memory (set HGAS_SIM_HEAP_SIZE, e.g. 64M)");
    std::string why;
    std::unique_ptr<engine> e = o.kind == HGAS_KIND_CUDA ? make_cuda_engine(&why) : make_host_engine();
    if (!e) return fail(why);
    if (!(why = e->init(o.block, 2, o.blas_threads)).empty()) return fail(why);
    int blas_threads = o.blas_threads;
    if (o.kind != HGAS_KIND_CUDA && blas_threads == 0) {
        const int local = std::max(1, hgas_local_n());
        blas_threads = std::max(1, static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN)) / local);
    }
    const int procs = count_processes();
    const double gpus = o.kind == HGAS_KIND_CUDA ? count_gpus() : 0;
    arrays m;
    if (!(why = setup(o, *e, m)).empty()) return fail(why);
    const double flop = 2.0 * o.n * o.n * o.n;
    if (me == 0 && !o.quiet)
        std::printf("matmul: n %llu, tiles %llu x %llu of order %llu, kind %s, %d ranks in %d processes, %s\n",
                    static_cast<unsigned long long>(o.n), static_cast<unsigned long long>(m.nb),
                    static_cast<unsigned long long>(m.nb), static_cast<unsigned long long>(o.block),
                    hgas_kind_name(o.kind), p, procs, e->library());
    result r;
    for (int rep = -1; rep < o.reps; ++rep) {  // rep -1: the warm-up
        step_stats st;
        hgas_barrier();
        const double t0 = now();
        if (!(why = multiply(*e, m, st)).empty()) return fail(why);
        if (hgas_barrier() != HGAS_OK) return fail(std::string("barrier: ") + hgas_last_error());
        const double t = now() - t0;
        if (rep < 0) continue;
        r.times.push_back(t);
        double w = st.wait_s;
        uint64_t fb = st.fetched_bytes;
        hgas_allreduce(&w, &w, 1, HGAS_DOUBLE, HGAS_OP_MAX);
        r.wait_max = std::max(r.wait_max, w);
        hgas_allreduce(&r.fetched_max, &fb, 1, HGAS_UINT64, HGAS_OP_MAX);
        hgas_allreduce(&r.fetched_sum, &fb, 1, HGAS_UINT64, HGAS_OP_SUM);
        if (me == 0 && !o.quiet)
            std::printf("matmul: rep %d: %.4g s, %.2f GFLOP/s (max wait on gets %.4g s)\n", rep + 1, t, flop / t * 1e-9, w);
    }
    const double best = *std::min_element(r.times.begin(), r.times.end());
    if (me == 0)
        std::printf("matmul: n %llu on %d ranks (%s): %.4g s, %.2f GFLOP/s; fetched %.4g MiB per rank (max), waited %.4g s (max)\n",
                    static_cast<unsigned long long>(o.n), p, hgas_kind_name(o.kind), best, flop / best * 1e-9,
                    r.fetched_max / 1048576.0, r.wait_max);
    check c;
    int verdict = 0;  // 0 passed or not checked, 1 wrong values, 2 could not check
    if (o.verify && me == 0) {
        c = verify(*e, m, o.reps, o.inject_error);
        if (!c.error.empty()) {
            std::fprintf(stderr, "matmul: rank 0: %s\n", c.error.c_str());
            verdict = 2;
        } else {
            const double ref = flop / c.ref_s * 1e-9, g = flop / best * 1e-9;
            std::printf("matmul: one-rank %s: %.4g s, %.2f GFLOP/s; distributed/one-rank %.3f", e->library(), c.ref_s, ref, g / ref);
            if (o.kind == HGAS_KIND_CUDA) std::printf(" on %.3g GPU(s), %.3f per GPU", gpus, g / (gpus > 0 ? gpus : 1) / ref);
            std::printf("\nmatmul: verification: max relative error %.3e (bound %.3e): %s\n", c.max_rel_err, c.bound,
                        c.ok ? "PASSED" : "FAILED");
            verdict = c.ok ? 0 : 1;
        }
    }
    if (hgas_allreduce(&verdict, &verdict, 1, HGAS_INT32, HGAS_OP_MAX) != HGAS_OK)
        return fail(std::string("allreduce: ") + hgas_last_error());
    if (me == 0 && !o.json.empty()) write_json(o, m, *e, procs, gpus, r, c, o.kind == HGAS_KIND_CUDA ? 0 : blas_threads);
    release(m);
    return verdict;
}

}  // namespace
}  // namespace matmul

namespace {
// One rank: init, the program, finalize.
int run_rank(int argc, char **argv) {
    if (hgas_init() != HGAS_OK) {
        std::fprintf(stderr, "matmul: hgas_init failed: %s\n", hgas_last_error());
        return 1;
    }
    int rc = matmul::run(argc, argv);
    std::fflush(stdout);
    hgas_finalize();
    return rc;
}
}  // namespace

// Ranks as threads (hgasrun --threads T sets HGAS_THREADS=T; docs/threads.md): each of T
// threads of the process calls hgas_init and runs the whole program as its own rank. The
// program keeps no globals, so its ranks share nothing but the process.
int main(int argc, char **argv) {
    const char *t = std::getenv("HGAS_THREADS");
    const int threads = t ? std::atoi(t) : 1;
    if (threads <= 1) return run_rank(argc, argv);
    std::vector<int> rc(static_cast<size_t>(threads), 0);
    std::vector<std::thread> ranks;
    for (int i = 0; i < threads; ++i) ranks.emplace_back([&rc, i, argc, argv] { rc[i] = run_rank(argc, argv); });
    for (std::thread &r : ranks) r.join();
    return *std::max_element(rc.begin(), rc.end());
}
