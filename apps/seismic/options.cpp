// Command line of seismic (README.md, "Options"). Every value is checked here; what depends
// on the job (rank count, decomposition) is checked in setup.cpp.
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "setup.hpp"

namespace seismic {
namespace {

const char k_usage[] = R"(usage: hgasrun -n N seismic [options]

  --grid NXxNYxNZ        grid points (default 101x101x101)
  --h D                  grid spacing in m, all axes (default 10)
  --dt S                 time step in s (default 1.6e-3; Courant number must be <= 1)
  --steps K              time steps (default 200)
  --f0 HZ                Ricker dominant frequency (default 7); --t0 S delay (default 1.2/f0)
  --factor A             source amplitude (default 1e7)
  --pml N                C-PML points on each face (default 10)
  --model homogeneous|layered
                         homogeneous: cp 3300 m/s, cs cp/1.732, rho 2800 kg/m3;
                         layered: three layers along z (README.md); --layer adds your own
  --layer Z,CP,CS,RHO    a layer from depth Z (m) down (repeat; the first must start at 0)
  --source explosive|force-x|force-y|force-z   (default explosive)
  --src I,J,K            source cell (default: the centre)
  --rec-offsets D,D,...  receivers at D cells along +x from the source (default 10,20,...)
  --rec I,J,K            a receiver at a cell (repeat)
  --decomp PYxPZ         ranks along y and z (default 1xN: z-slabs)
  --kind host|sim|cuda   memory of the fields (host: the CPU computes; sim: hgas's simulated
                         device memory, computed through copies; cuda: GPU kernels)
  --style basic|pipelined|integrated
                         halo exchange: basic (faces copied to host buffers, host send/recv,
                         copied back), pipelined (by hand, in chunks, per-peer buffers and
                         streams), integrated (hgas typed send/recv on the fields) (default)
  --chunks C             pipelined: chunks per face (default 4)
  --overlap 0|1          integrated, pipelined: update the interior cells while the halo
                         messages (and pipelined's copies) are in flight, then the rim cells
                         that read the halos (default 1)
  --energy-every K       total energy every K steps (default 1; 0: never)
  --seismograms FILE     write the receivers' seismograms (text, README.md "Output")
  --energy FILE          write energy and max |v| per step
  --json FILE            append one JSON record of the run
  --quiet                only the summary lines
)";

bool parse_long(const char *s, long lo, long hi, long *out) {
    char *end = nullptr;
    errno = 0;
    long v = std::strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) return false;
    *out = v;
    return true;
}

bool parse_int(const char *s, long lo, long hi, int *out) {
    long v;
    if (!parse_long(s, lo, hi, &v)) return false;
    *out = static_cast<int>(v);
    return true;
}

bool parse_double(const char *s, double lo, double hi, double *out) {
    char *end = nullptr;
    errno = 0;
    double v = std::strtod(s, &end);
    if (errno || end == s || *end || !std::isfinite(v) || v < lo || v > hi) return false;
    *out = v;
    return true;
}

// "A<sep>B<sep>C..." into ints (count: exactly that many, 0: any number >= 1)
bool parse_ints(const std::string &s, const char *seps, size_t count, long lo, long hi, std::vector<int> &out) {
    out.clear();
    size_t pos = 0;
    for (;;) {
        size_t e = s.find_first_of(seps, pos);
        std::string part = s.substr(pos, e == std::string::npos ? std::string::npos : e - pos);
        int v;
        if (!parse_int(part.c_str(), lo, hi, &v)) return false;
        out.push_back(v);
        if (e == std::string::npos) break;
        pos = e + 1;
    }
    return count == 0 || out.size() == count;
}

bool parse_doubles(const std::string &s, size_t count, std::vector<double> &out) {
    out.clear();
    size_t pos = 0;
    for (;;) {
        size_t e = s.find(',', pos);
        std::string part = s.substr(pos, e == std::string::npos ? std::string::npos : e - pos);
        double v;
        if (!parse_double(part.c_str(), 0, 1e12, &v)) return false;
        out.push_back(v);
        if (e == std::string::npos) break;
        pos = e + 1;
    }
    return out.size() == count;
}

bool g_speak = true;  // only rank 0 prints usage and errors

int fail(const char *opt, const char *val, const char *want) {
    if (g_speak) std::fprintf(stderr, "seismic: %s %s: %s\n%s", opt, val ? val : "(missing)", want, k_usage);
    return 2;
}

}  // namespace

const char *name(kind k) { return k == kind::host ? "host" : k == kind::sim ? "sim" : "cuda"; }
const char *name(style s) {
    return s == style::basic ? "basic" : s == style::pipelined ? "pipelined" : "integrated";
}

bool parse_options(int argc, char **argv, options &o, int *exit_code, bool speak) {
    *exit_code = 2;
    g_speak = speak;
    bool decomp_given = false;
    std::vector<int> iv;
    std::vector<double> dv;
    for (int a = 1; a < argc; ++a) {
        const char *opt = argv[a];
        auto has_value = [&] { return a + 1 < argc; };
        if (!std::strcmp(opt, "-h") || !std::strcmp(opt, "--help")) {
            if (speak) std::fputs(k_usage, stdout);
            *exit_code = 0;
            return false;
        }
        if (!std::strcmp(opt, "--quiet")) { o.quiet = true; continue; }
        if (!has_value()) { fail(opt, nullptr, "wants a value (or is unknown: see the usage)"); return false; }
        const char *val = argv[++a];
        std::string v = val;
        if (!std::strcmp(opt, "--grid")) {
            if (!parse_ints(v, "xX", 3, 8, 1 << 14, iv)) { fail(opt, val, "wants NXxNYxNZ, each 8..16384"); return false; }
            o.nx = iv[0], o.ny = iv[1], o.nz = iv[2];
        } else if (!std::strcmp(opt, "--h")) {
            if (!parse_double(val, 1e-3, 1e6, &o.dx)) { fail(opt, val, "wants a spacing in m, 0.001..1e6"); return false; }
            o.dy = o.dz = o.dx;
        } else if (!std::strcmp(opt, "--dt")) {
            if (!parse_double(val, 1e-9, 10, &o.dt)) { fail(opt, val, "wants a time step in s, 1e-9..10"); return false; }
        } else if (!std::strcmp(opt, "--steps")) {
            if (!parse_int(val, 1, 100000000, &o.steps)) { fail(opt, val, "wants a step count, 1..1e8"); return false; }
        } else if (!std::strcmp(opt, "--f0")) {
            if (!parse_double(val, 1e-3, 1e6, &o.f0)) { fail(opt, val, "wants a frequency in Hz, 0.001..1e6"); return false; }
        } else if (!std::strcmp(opt, "--t0")) {
            if (!parse_double(val, 0, 1e6, &o.t0)) { fail(opt, val, "wants a delay in s, >= 0"); return false; }
        } else if (!std::strcmp(opt, "--factor")) {
            if (!parse_double(val, 0, 1e30, &o.factor)) { fail(opt, val, "wants an amplitude >= 0"); return false; }
        } else if (!std::strcmp(opt, "--pml")) {
            if (!parse_int(val, 0, 1000, &o.npml)) { fail(opt, val, "wants a point count, 0..1000"); return false; }
        } else if (!std::strcmp(opt, "--model")) {
            if (v != "homogeneous" && v != "layered") { fail(opt, val, "wants homogeneous or layered"); return false; }
            o.model = v;
        } else if (!std::strcmp(opt, "--layer")) {
            if (!parse_doubles(v, 4, dv) || dv[1] <= 0 || dv[2] < 0 || dv[3] <= 0 || dv[2] * 1.4142 >= dv[1]) {
                fail(opt, val, "wants Z,CP,CS,RHO: depth >= 0 (m), cp > 0, 0 <= cs < cp/sqrt(2) (m/s), rho > 0");
                return false;
            }
            if (!o.layers.empty() && dv[0] <= o.layers.back().z_top) {
                fail(opt, val, "layers must be given top down, each deeper than the one before");
                return false;
            }
            o.layers.push_back({dv[0], dv[1], dv[2], dv[3]});
            o.model = "layered";
        } else if (!std::strcmp(opt, "--source")) {
            if (v == "explosive") o.src = source_type::explosive;
            else if (v.size() == 7 && v.compare(0, 6, "force-") == 0 && v[6] >= 'x' && v[6] <= 'z') {
                o.src = source_type::force;
                o.force_dir = v[6] - 'x';
            } else { fail(opt, val, "wants explosive, force-x, force-y or force-z"); return false; }
        } else if (!std::strcmp(opt, "--src")) {
            if (!parse_ints(v, ",", 3, 0, 1 << 14, iv)) { fail(opt, val, "wants I,J,K (cell indices from 0)"); return false; }
            o.si = iv[0], o.sj = iv[1], o.sk = iv[2];
        } else if (!std::strcmp(opt, "--rec-offsets")) {
            if (!parse_ints(v, ",", 0, -(1 << 14), 1 << 14, o.rec_offsets)) { fail(opt, val, "wants D,D,... (cells)"); return false; }
        } else if (!std::strcmp(opt, "--rec")) {
            if (!parse_ints(v, ",", 3, 0, 1 << 14, iv)) { fail(opt, val, "wants I,J,K (cell indices from 0)"); return false; }
            o.recs.push_back({iv[0], iv[1], iv[2]});
        } else if (!std::strcmp(opt, "--decomp")) {
            if (!parse_ints(v, "xX", 2, 1, 1 << 14, iv)) { fail(opt, val, "wants PYxPZ, e.g. 1x4 or 2x2"); return false; }
            o.py = iv[0], o.pz = iv[1];
            decomp_given = true;
        } else if (!std::strcmp(opt, "--kind")) {
            if (v == "host") o.mem = kind::host;
            else if (v == "sim") o.mem = kind::sim;
            else if (v == "cuda") o.mem = kind::cuda;
            else { fail(opt, val, "wants host, sim or cuda"); return false; }
        } else if (!std::strcmp(opt, "--style")) {
            if (v == "basic") o.sty = style::basic;
            else if (v == "pipelined") o.sty = style::pipelined;
            else if (v == "integrated") o.sty = style::integrated;
            else { fail(opt, val, "wants basic, pipelined or integrated"); return false; }
        } else if (!std::strcmp(opt, "--chunks")) {
            if (!parse_int(val, 1, 1024, &o.chunks)) { fail(opt, val, "wants a chunk count, 1..1024"); return false; }
        } else if (!std::strcmp(opt, "--overlap")) {
            int on = 0;
            if (!parse_int(val, 0, 1, &on)) { fail(opt, val, "wants 0 or 1"); return false; }
            o.overlap = on != 0;
        } else if (!std::strcmp(opt, "--energy-every")) {
            if (!parse_int(val, 0, 100000000, &o.energy_every)) { fail(opt, val, "wants a step count >= 0"); return false; }
        } else if (!std::strcmp(opt, "--seismograms")) {
            o.seis_file = v;
        } else if (!std::strcmp(opt, "--energy")) {
            o.energy_file = v;
        } else if (!std::strcmp(opt, "--json")) {
            o.json_file = v;
        } else {
            --a;
            fail(opt, "", "unknown option");
            return false;
        }
    }
    if (!decomp_given) o.py = 1, o.pz = 0;
    return true;
}

}  // namespace seismic
