#include "options.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>

namespace episim {

const char *USAGE =
    "usage: episim [options]   (run under hgasrun: hgasrun -n 4 episim ...)\n"
    "population and model:\n"
    "  --scenario grid|one-location  synthetic grid population (default), or every person all day\n"
    "                             at one location (the analytic check)\n"
    "  --persons N                persons (default 20000)\n"
    "  --grid WxH                 location grid (default 40x40)\n"
    "  --visits X                 mean visits per person per day, Poisson (default 5)\n"
    "  --hops X                   mean Manhattan hops from home per visit, Poisson (default 5.2)\n"
    "  --sublocs N                sub-locations per location (default 4)\n"
    "  --initial X                expected initially infectious persons (grid; default 10)\n"
    "  --infectious N             one-location: persons 0..N-1 start infectious (default 5)\n"
    "  --tau X                    transmissibility per day of overlap (default 1)\n"
    "  --contact-p X              probability that overlapping visitors are in contact (default 1)\n"
    "  --latent-days X            mean days exposed, at least 1 (default 2)\n"
    "  --infectious-days X        mean days infectious, at least 1 (default 4)\n"
    "  --days N                   simulated days (default 30)\n"
    "  --seed N                   population and draws (default 1)\n"
    "  --runs N                   N runs with seeds seed .. seed+N-1 (default 1)\n"
    "execution:\n"
    "  --kind host|sim|cuda       memory of the locations' arrays (default host)\n"
    "  --style basic|pipelined|integrated   how visit and infection messages reach and leave\n"
    "                             that memory (default integrated)\n"
    "  --fragment BYTES           fragment size, a multiple of 80 (default 8192 rounded: 8160)\n"
    "  --fragments N              fragments posted per peer (default 4)\n"
    "  --sort-on-arrival 0|1      integrated, pipelined: sort each visit fragment on the device as it\n"
    "                             arrives and merge the sorted runs, instead of one sort after the\n"
    "                             last (default 1 for host and sim, 0 for cuda)\n"
    "  --timeout S                seconds a rank waits for a fragment before failing (default 120)\n"
    "output:\n"
    "  --curve FILE               write the per-day table (day new S E I R) of the first run\n"
    "  --json FILE                append one JSON record (also printed as a line 'JSON {...}')\n"
    "  --quiet                    no per-day lines\n";

const char *style_name(style s) {
    return s == style::basic ? "basic" : s == style::pipelined ? "pipelined" : "integrated";
}
const char *kind_name(kind k) { return k == kind::host ? "host" : k == kind::sim ? "sim" : "cuda"; }

namespace {

bool num(const char *opt, const char *v, double lo, double hi, double *out, std::string *err) {
    char *end = nullptr;
    errno = 0;
    const double x = std::strtod(v, &end);
    if (errno || end == v || *end || !std::isfinite(x) || x < lo || x > hi) {
        *err = std::string(opt) + " wants a number in [" + std::to_string(lo) + ", " + std::to_string(hi) +
               "], not '" + v + "'";
        return false;
    }
    *out = x;
    return true;
}

bool integer(const char *opt, const char *v, double lo, double hi, uint64_t *out, std::string *err) {
    double x;
    if (!num(opt, v, lo, hi, &x, err)) return false;
    if (x != std::floor(x)) {
        *err = std::string(opt) + " wants a whole number, not '" + v + "'";
        return false;
    }
    *out = uint64_t(x);
    return true;
}

}  // namespace

bool parse_options(int argc, char **argv, Options *o, std::string *err, bool *help) {
    *help = false;
    bool fragment_given = false, sort_given = false;
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        if (!std::strcmp(a, "--help") || !std::strcmp(a, "-h")) {
            *help = true;
            return true;
        }
        if (!std::strcmp(a, "--quiet")) {
            o->quiet = true;
            continue;
        }
        if (std::strncmp(a, "--", 2) != 0) {
            *err = std::string("unexpected argument '") + a + "' (episim --help lists the options)";
            return false;
        }
        if (i + 1 >= argc) {
            *err = std::string(a) + " wants a value (episim --help)";
            return false;
        }
        const char *v = argv[++i];
        uint64_t u = 0;
        bool ok = true;
        Config &c = o->c;
        if (!std::strcmp(a, "--scenario")) {
            if (!std::strcmp(v, "grid")) c.scen = scenario::grid;
            else if (!std::strcmp(v, "one-location")) c.scen = scenario::one_location;
            else { *err = std::string("--scenario wants grid or one-location, not '") + v + "'"; return false; }
        } else if (!std::strcmp(a, "--persons")) {
            ok = integer(a, v, 1, 4e9, &c.persons, err);
        } else if (!std::strcmp(a, "--grid")) {
            unsigned w = 0, h = 0;
            char tail = 0;
            if (std::sscanf(v, "%ux%u%c", &w, &h, &tail) != 2 || w < 1 || h < 1 || double(w) * h > 4e9) {
                *err = std::string("--grid wants WxH (e.g. 40x40, each at least 1), not '") + v + "'";
                return false;
            }
            c.gx = w, c.gy = h;
        } else if (!std::strcmp(a, "--visits")) {
            ok = num(a, v, 0, 50, &c.visits, err);
        } else if (!std::strcmp(a, "--hops")) {
            ok = num(a, v, 0, 50, &c.hops, err);
        } else if (!std::strcmp(a, "--sublocs")) {
            ok = integer(a, v, 1, 65535, &u, err), c.sublocs = uint32_t(u);
        } else if (!std::strcmp(a, "--initial")) {
            ok = num(a, v, 0, 4e9, &c.initial, err);
        } else if (!std::strcmp(a, "--infectious")) {
            ok = integer(a, v, 0, 4e9, &c.infectious, err);
        } else if (!std::strcmp(a, "--tau")) {
            ok = num(a, v, 0, 1e6, &c.p.tau, err);
        } else if (!std::strcmp(a, "--contact-p")) {
            ok = num(a, v, 0, 1, &c.p.contact_p, err);
        } else if (!std::strcmp(a, "--latent-days")) {
            ok = num(a, v, 1, 1000, &c.latent_days, err);
        } else if (!std::strcmp(a, "--infectious-days")) {
            ok = num(a, v, 1, 1000, &c.infectious_days, err);
        } else if (!std::strcmp(a, "--days")) {
            ok = integer(a, v, 1, 100000, &u, err), c.days = uint32_t(u);
        } else if (!std::strcmp(a, "--seed")) {
            ok = integer(a, v, 0, 9e15, &c.p.seed, err);
        } else if (!std::strcmp(a, "--runs")) {
            ok = integer(a, v, 1, 1e6, &u, err), o->runs = unsigned(u);
        } else if (!std::strcmp(a, "--kind")) {
            if (!std::strcmp(v, "host")) o->k = kind::host;
            else if (!std::strcmp(v, "sim")) o->k = kind::sim;
            else if (!std::strcmp(v, "cuda")) o->k = kind::cuda;
            else { *err = std::string("--kind wants host, sim or cuda, not '") + v + "'"; return false; }
        } else if (!std::strcmp(a, "--style")) {
            if (!std::strcmp(v, "basic")) o->st = style::basic;
            else if (!std::strcmp(v, "pipelined")) o->st = style::pipelined;
            else if (!std::strcmp(v, "integrated")) o->st = style::integrated;
            else { *err = std::string("--style wants basic, pipelined or integrated, not '") + v + "'"; return false; }
        } else if (!std::strcmp(a, "--fragment")) {
            ok = integer(a, v, 80, 1 << 30, &u, err);
            if (ok && u % 80) {
                *err = std::string("--fragment wants a multiple of 80 bytes (whole visits of 20 and infections "
                                   "of 16 bytes), not ") + v + " (e.g. " + std::to_string(u / 80 * 80 + 80) + ")";
                return false;
            }
            o->fragment = size_t(u), fragment_given = true;
        } else if (!std::strcmp(a, "--sort-on-arrival")) {
            if (std::strcmp(v, "0") && std::strcmp(v, "1")) {
                *err = std::string("--sort-on-arrival wants 0 or 1, not '") + v + "'";
                return false;
            }
            o->sort_on_arrival = v[0] == '1', sort_given = true;
        } else if (!std::strcmp(a, "--fragments")) {
            ok = integer(a, v, 1, 1024, &u, err), o->per_peer = int(u);
        } else if (!std::strcmp(a, "--timeout")) {
            ok = num(a, v, 1, 1e6, &o->timeout, err);
        } else if (!std::strcmp(a, "--curve")) {
            o->curve_file = v;
        } else if (!std::strcmp(a, "--json")) {
            o->json_file = v;
        } else {
            *err = std::string("unknown option '") + a + "' (episim --help lists the options)";
            return false;
        }
        if (!ok) return false;
    }
    if (!fragment_given) o->fragment = o->fragment / 80 * 80;
    // On a GPU one sort of the whole day (about 1 ms on an H100 at 400,000 persons) beats sorting
    // each fragment as it comes (a few kernel launches per fragment: 100 ms a day there).
    if (!sort_given) o->sort_on_arrival = o->k != kind::cuda;
    if (o->c.scen == scenario::one_location) {
        o->c.gx = o->c.gy = 1;
        if (o->c.infectious > o->c.persons) {
            *err = "--infectious (" + std::to_string(o->c.infectious) + ") exceeds --persons (" +
                   std::to_string(o->c.persons) + ")";
            return false;
        }
    }
    return true;
}

}  // namespace episim
