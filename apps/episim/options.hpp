// Command line of episim (README.md "Options").
#pragma once
#include <string>

#include "device.hpp"
#include "population.hpp"

namespace episim {

enum class style { basic, pipelined, integrated };
const char *style_name(style s);
const char *kind_name(kind k);

struct Options {
    Config c;
    kind k = kind::host;
    style st = style::integrated;
    size_t fragment = 8192;  // bytes of one fragment (a multiple of 80: whole visits and infections)
    int per_peer = 4;        // fragments posted per peer
    bool sort_on_arrival = true;  // integrated: sort each visit fragment as it arrives, merge the runs
    unsigned runs = 1;       // runs with seeds seed, seed+1, ...
    double timeout = 120;    // seconds without a fragment before a rank gives up
    std::string curve_file, json_file;
    bool quiet = false;      // no per-day lines
};

// Parses argv; on bad input returns false with *err saying what and how to fix it; --help
// sets *help.
bool parse_options(int argc, char **argv, Options *o, std::string *err, bool *help);
extern const char *USAGE;

}  // namespace episim
