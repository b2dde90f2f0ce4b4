// Command line of matmul (README.md, "Options"). Every value is checked here.
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "matmul.hpp"

namespace matmul {
namespace {

const char k_usage[] = R"(usage: hgasrun -n P matmul [options]

  --n N                  matrix order (default 1024); C = A·B, all N x N doubles
  --block B              tile order; N must be a multiple of B (default: N/4 for cuda,
                         else the largest of 256, 128, ... 1 that divides N, at most N)
  --kind host|sim|cuda   memory of A, B and C (host: OpenBLAS on the CPU; sim: hgas's simulated
                         device memory, every tile fetched to the CPU; cuda: cuBLAS on the GPU)
  --reps R               timed products after one warm-up (default 3)
  --no-verify            skip the one-rank reference product and the check
  --inject-error         spoil one element of C before the check (it must then fail)
  --blas-threads T       OpenBLAS threads per rank (default: the node's cores / its ranks)
  --json FILE            append one JSON record of the run
  --quiet                only the summary lines
)";

bool parse_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out) {
    char *end = nullptr;
    errno = 0;
    if (!s || *s == '-') return false;
    unsigned long long v = std::strtoull(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) return false;
    *out = v;
    return true;
}

}  // namespace

bool parse(int argc, char **argv, options &o, int *exit_code) {
    const bool talk = hgas_rank_me() <= 0;
    auto bad = [&](const char *fmt, const char *a, const char *b) {
        if (talk) {
            std::fprintf(stderr, "matmul: ");
            std::fprintf(stderr, fmt, a, b);
            std::fprintf(stderr, "\n%s", k_usage);
        }
        *exit_code = 2;
        return false;
    };
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : nullptr;
        auto need = [&]() { return v != nullptr; };
        uint64_t u = 0;
        if (!std::strcmp(a, "--help") || !std::strcmp(a, "-h")) {
            if (talk) std::fputs(k_usage, stdout);
            *exit_code = 0;
            return false;
        } else if (!std::strcmp(a, "--n")) {
            if (!need() || !parse_u64(v, 1, 1u << 20, &u)) return bad("%s needs a matrix order in 1..1048576 (got '%s')", a, v ? v : "");
            o.n = u, ++i;
        } else if (!std::strcmp(a, "--block")) {
            if (!need() || !parse_u64(v, 1, 1u << 20, &u)) return bad("%s needs a tile order >= 1 (got '%s')", a, v ? v : "");
            o.block = u, ++i;
        } else if (!std::strcmp(a, "--kind")) {
            if (!need()) return bad("%s needs host, sim or cuda%s", a, "");
            if (!std::strcmp(v, "host")) o.kind = HGAS_KIND_HOST;
            else if (!std::strcmp(v, "sim")) o.kind = HGAS_KIND_SIM;
            else if (!std::strcmp(v, "cuda")) o.kind = HGAS_KIND_CUDA;
            else return bad("%s needs host, sim or cuda (got '%s')", a, v);
            ++i;
        } else if (!std::strcmp(a, "--reps")) {
            if (!need() || !parse_u64(v, 1, 1000, &u)) return bad("%s needs a count in 1..1000 (got '%s')", a, v ? v : "");
            o.reps = static_cast<int>(u), ++i;
        } else if (!std::strcmp(a, "--blas-threads")) {
            if (!need() || !parse_u64(v, 1, 1024, &u)) return bad("%s needs a count in 1..1024 (got '%s')", a, v ? v : "");
            o.blas_threads = static_cast<int>(u), ++i;
        } else if (!std::strcmp(a, "--json")) {
            if (!need() || !*v) return bad("%s needs a file name%s", a, "");
            o.json = v, ++i;
        } else if (!std::strcmp(a, "--no-verify")) {
            o.verify = false;
        } else if (!std::strcmp(a, "--inject-error")) {
            o.inject_error = true;
        } else if (!std::strcmp(a, "--quiet")) {
            o.quiet = true;
        } else {
            return bad("unknown option '%s'%s (--help lists them)", a, "");
        }
    }
    if (o.block == 0) {
        if (o.kind == HGAS_KIND_CUDA && o.n % 4 == 0) {
            o.block = o.n / 4;  // 16384: tiles of 4096, large enough for cuBLAS's full speed
        } else {
            o.block = 256;
            while (o.block > 1 && (o.block > o.n || o.n % o.block)) o.block /= 2;
        }
    }
    if (o.block > o.n || o.n % o.block) {
        char m[160];
        std::snprintf(m, sizeof m, "--n %llu is not a multiple of --block %llu: choose a tile order that divides the matrix order",
                      static_cast<unsigned long long>(o.n), static_cast<unsigned long long>(o.block));
        return bad("%s%s", m, "");
    }
    if (o.inject_error && !o.verify) return bad("--inject-error needs the check (drop --no-verify)%s%s", "", "");
    return true;
}

}  // namespace matmul
