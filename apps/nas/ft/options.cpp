#include "options.hpp"

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace ft {

const char *kind_name(kind k) { return k == kind::host ? "host" : k == kind::sim ? "sim" : "cuda"; }
const char *variant_name(variant v) { return v == variant::slabs ? "slabs" : "packed"; }

namespace {

const char *usage =
    "usage: nas-ft [--class S|W|A|B|C|D|E] [--kind host|sim|cuda] [--variant slabs|packed]\n"
    "              [--threads N] [--grid P1xP2] [--json PATH] [--fftw-measure] [--no-peer]\n"
    "  NPB 3.4 FT (3-D FFT PDE solver) on hgas; run it under hgasrun -n N.\n"
    "  --class     problem class (default S)\n"
    "  --kind      memory of the field and the transpose: host (FFTW), cuda (cuFFT, the GPU's\n"
    "              memory), sim (FFTW on the host; the transpose lands in hgas sim memory)\n"
    "  --variant   slabs: each plane group is put to its destinations as soon as it is\n"
    "              transformed; packed: pack, one all-to-all, unpack (default slabs)\n"
    "  --threads   compute threads per rank (default: cores of the node / ranks on it)\n"
    "  --grid      process grid P1xP2 = the rank count (default: P1 = ranks, P2 = 1, the\n"
    "              slab decomposition, while that fits; P2 > 1: the 2-D pencil decomposition)\n"
    "  --json      append the run's JSON record to PATH\n"
    "  --fftw-measure  plan FFTW with FFTW_MEASURE (slower start, often faster transforms)\n"
    "  --no-peer   kind cuda: skip the cuFFT-only 3-D transform timed for comparison\n";

bool bad(bool loud, int *code, const char *fmt, const char *a, const char *b = "") {
    if (loud) {
        std::fprintf(stderr, "nas-ft: ");
        std::fprintf(stderr, fmt, a, b);
        std::fprintf(stderr, "\n%s", usage);
    }
    *code = 2;
    return false;
}

}  // namespace

std::optional<options> parse_options(int argc, char **argv, bool loud, int *code) {
    options o;
    lookup_class('S', &o.prob);
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        auto value = [&](const char **v) {
            if (i + 1 >= argc) return bad(loud, code, "option %s needs a value", a);
            *v = argv[++i];
            return true;
        };
        const char *v = nullptr;
        if (!std::strcmp(a, "-h") || !std::strcmp(a, "--help")) {
            if (loud) std::printf("%s", usage);
            *code = 0;
            return std::nullopt;
        } else if (!std::strcmp(a, "--class")) {
            if (!value(&v)) return std::nullopt;
            if (std::strlen(v) != 1 || !lookup_class(char(std::toupper(static_cast<unsigned char>(v[0]))), &o.prob)) {
                bad(loud, code, "unknown class '%s' (NPB FT classes: S, W, A, B, C, D, E)", v);
                return std::nullopt;
            }
        } else if (!std::strcmp(a, "--kind")) {
            if (!value(&v)) return std::nullopt;
            if (!std::strcmp(v, "host")) o.mem = kind::host;
            else if (!std::strcmp(v, "sim")) o.mem = kind::sim;
            else if (!std::strcmp(v, "cuda")) o.mem = kind::cuda;
            else {
                bad(loud, code, "unknown kind '%s' (host, sim or cuda)", v);
                return std::nullopt;
            }
        } else if (!std::strcmp(a, "--variant")) {
            if (!value(&v)) return std::nullopt;
            if (!std::strcmp(v, "slabs")) o.var = variant::slabs;
            else if (!std::strcmp(v, "packed")) o.var = variant::packed;
            else {
                bad(loud, code, "unknown variant '%s' (slabs or packed)", v);
                return std::nullopt;
            }
        } else if (!std::strcmp(a, "--threads")) {
            if (!value(&v)) return std::nullopt;
            char *end = nullptr;
            const long t = std::strtol(v, &end, 10);
            if (*v == '\0' || *end != '\0' || t < 1 || t > 1024) {
                bad(loud, code, "--threads wants a number from 1 to 1024, not '%s'", v);
                return std::nullopt;
            }
            o.threads = int(t);
        } else if (!std::strcmp(a, "--grid")) {
            if (!value(&v)) return std::nullopt;
            char *end = nullptr;
            const long p1 = std::strtol(v, &end, 10);
            char *end2 = nullptr;
            const long p2 = (*end == 'x' || *end == 'X') ? std::strtol(end + 1, &end2, 10) : 0;
            if (!std::isdigit(static_cast<unsigned char>(*v)) || p1 < 1 || p2 < 1 || p1 > 65536 || p2 > 65536 ||
                !end2 || *end2 != '\0' || !std::isdigit(static_cast<unsigned char>(end[1]))) {
                bad(loud, code, "--grid wants P1xP2 (two positive numbers, e.g. 2x2), not '%s'", v);
                return std::nullopt;
            }
            o.want_p1 = int(p1);
            o.want_p2 = int(p2);
        } else if (!std::strcmp(a, "--json")) {
            if (!value(&v)) return std::nullopt;
            o.json_path = v;
        } else if (!std::strcmp(a, "--fftw-measure")) {
            o.measure = true;
        } else if (!std::strcmp(a, "--no-peer")) {
            o.cufft_peer = false;
        } else if (!std::strcmp(a, "--perturb")) {
            o.perturb = true;  // for the tests (README.md): the run must then fail verification
        } else {
            bad(loud, code, "unknown option '%s'", a);
            return std::nullopt;
        }
    }
    return o;
}

}  // namespace ft
