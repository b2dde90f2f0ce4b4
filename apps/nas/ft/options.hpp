// nas-ft's command line.
#pragma once

#include <optional>
#include <string>

#include "classes.hpp"

namespace ft {

enum class kind { host, sim, cuda };
enum class variant { slabs, packed };

struct options {
    problem prob;
    kind mem = kind::host;
    variant var = variant::slabs;
    int threads = 0;          // compute threads per rank; 0: cores / ranks on the node
    std::string json_path;    // --json: append the record here
    bool measure = false;     // --fftw-measure: FFTW_MEASURE plans instead of FFTW_ESTIMATE
    bool cufft_peer = true;   // kind cuda: also time cuFFT's own 3-D transform (--no-peer: skip)
    bool perturb = false;     // test option: disturb one initial value, verification must fail
    int want_p1 = 0, want_p2 = 0;  // --grid P1xP2 (0: chosen from the rank count)
    int p1 = 0, p2 = 1;       // the process grid in use (main sets it; p2 > 1: 2-D decomposition)
};

const char *kind_name(kind k);
const char *variant_name(variant v);

/// Parses argv; on a bad or --help command line prints (if loud) and returns nullopt with the
/// exit code in *code (0 for --help, 2 for bad input).
std::optional<options> parse_options(int argc, char **argv, bool loud, int *code);

}  // namespace ft
