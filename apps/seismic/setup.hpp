// The run's description: options (options.cpp), the decomposition, medium, C-PML profiles,
// source and receivers (setup.cpp). Everything here is computed identically on every rank.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "kernels.hpp"

namespace seismic {

enum class kind { host, sim, cuda };
enum class style { basic, pipelined, integrated };
enum class source_type { explosive, force };

struct layer {         // from depth z_top (m) down to the next layer's top
    double z_top, cp, cs, rho;
};

struct options {
    int nx = 101, ny = 101, nz = 101;       // grid points (reference's 3-D example size)
    double dx = 10, dy = 10, dz = 10;       // m
    double dt = 1.6e-3;                     // s
    int steps = 200;
    double f0 = 7, t0 = -1;                 // Hz, s (t0 < 0: 1.2 / f0)
    double factor = 1e7;                    // source amplitude
    int npml = 10, npower = 2;
    double k_max = 1, alpha_max = -1, rcoef = 0.001;  // alpha_max < 0: pi f0
    std::string model = "homogeneous";      // or "layered"
    std::vector<layer> layers;              // the model as layers (homogeneous: one)
    source_type src = source_type::explosive;
    int force_dir = 2;                      // 0 x, 1 y, 2 z
    int si = -1, sj = -1, sk = -1;          // source cell (default: centre)
    std::vector<int> rec_offsets;           // receivers at (si + o, sj, sk)
    std::vector<std::array<int, 3>> recs;   // and at explicit cells
    int py = 1, pz = 0;                     // ranks along y and z (pz 0: all ranks)
    kind mem = kind::host;
    style sty = style::integrated;
    int chunks = 4;                         // pipelined: chunks per face
    bool overlap = true;                    // integrated: update the interior while the halos fly
    int energy_every = 1;                   // steps between energy sums (0: never)
    std::string seis_file, energy_file, json_file;
    bool quiet = false;
};

// Parses argv; on an error prints (when `speak`) what is wrong and the usage to stderr and
// returns false (*exit_code 2), on --help prints the usage and returns false (*exit_code 0).
bool parse_options(int argc, char **argv, options &o, int *exit_code, bool speak);
const char *name(kind k);
const char *name(style s);

struct receiver {
    int i, j, k;
    int owner;  // rank that records it
};

struct setup {
    options opt;
    int rank = 0, nranks = 1;
    int cy = 0, cz = 0;                      // this rank's coordinates in the py x pz grid
    int j0 = 0, k0 = 0, nyl = 0, nzl = 0;    // this rank's cells
    int ylo = -1, yhi = -1, zlo = -1, zhi = -1;  // neighbours (-1: none)
    size_t cells = 0;                        // per array: nx (nyl + 2) (nzl + 2)
    std::vector<float> prof_x, prof_y, prof_z;  // NPROFILES * n each
    double cp_max = 0, courant = 0;
    std::vector<receiver> recs;              // all receivers, in output order
    int src_owner = -1;
    // local cell index of (i, j, k) owned by this rank
    size_t at(int i, int j, int k) const {
        return (static_cast<size_t>(k - k0 + 1) * (nyl + 2) + static_cast<size_t>(j - j0 + 1)) * opt.nx + i;
    }
    bool owns(int j, int k) const { return j >= j0 && j < j0 + nyl && k >= k0 && k < k0 + nzl; }
    bool in_pml(int i, int j, int k) const;
    // Medium at depth z (m) of cell k: cp, cs, rho of the layer containing it.
    const layer &layer_at(int k) const;
    // Source amplitude added at step `it` (Ricker wavelet, factor * dt, / rho for a force).
    double ricker(int it) const;
};

// Checks the options against the job (rank count, decomposition, Courant number...) and fills
// the setup; on an error returns a message saying what is wrong and what to do.
std::string make_setup(const options &o, int rank, int nranks, setup &s);

}  // namespace seismic
