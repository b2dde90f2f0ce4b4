// Command line of himeno and the reference values it verifies against.
#pragma once

#include <optional>
#include <string>

namespace himeno {

enum class mode { cpu, hybrid, stream, kernel, device };
enum class kind { host, sim, cuda };

struct options {
    std::string size_name = "XS";  // as given (XS, S, ... or IxJxK)
    int mimax = 32, mjmax = 32, mkmax = 64;
    int iters = 64;
    himeno::mode mode = mode::cpu;
    himeno::kind kind = kind::host;
    int threads = 0;             // 0: hardware concurrency / ranks on this node, at least 1
    bool exchange = true;        // --no-exchange: skip halo exchange and per-sweep reduction
    bool overhead = false;       // run with and without exchange, report the difference
    bool verify = false;
    bool checksum = false;
    bool weak = false;           // --weak: the size is per rank; mimax grows with the rank count
    int poll_us = 100;           // cpu: progress poll period during interior compute; GPU modes
                                 // (default 20): sleep between checks of events and signals
    std::string json_path;
};

const char *mode_name(mode m);
const char *kind_name(kind k);

/// Parses argv. On bad input prints a message (if `loud`) and returns nullopt; `*exit_code` is
/// then 2, or 0 for --help.
std::optional<options> parse_options(int argc, char **argv, bool loud, int *exit_code);

/// gosa after `iters` sweeps from the initial state, from REFERENCE.md (the original code with
/// double accumulation), or nullopt when the table has no entry for these dimensions.
std::optional<double> reference_gosa(int mimax, int mjmax, int mkmax, int iters);

}  // namespace himeno
