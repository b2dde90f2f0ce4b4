// Where the fields live and who updates them: the CPU on host memory (device_host.cpp), the
// CPU through copies on hgas's simulated device memory (device_sim.cpp), or a GPU
// (device_cuda.cu). The time loop (main.cpp) and the halo exchange (exchange.cpp) see only
// this interface, so that the three exchange styles are one code for every kind.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "setup.hpp"

namespace seismic {

// Which owned cells an update covers. The rim: the cells whose stencil reads a halo cell (the
// first and last owned plane in z, and the first and last owned row in y of the planes
// between); the interior: all the others. Each cell's update reads only its own values and
// its neighbours' values of the other fields, so interior then rim gives the same bits as
// all: this is what lets style integrated update the interior while the halos are in flight.
enum class part { all, interior, rim };
// Global k in [k0, k1), j in [j0, j1), every i. Empty when k1 <= k0 or j1 <= j0.
struct box {
    int k0, k1, j0, j1;
    bool empty() const { return k1 <= k0 || j1 <= j0; }
};
// The boxes of a part of this rank's cells: one for all or interior, four for the rim
// (disjoint, so no cell is updated twice whatever the slab's thickness).
std::vector<box> boxes(const setup &s, part p);
// Called between planes of a CPU update of the interior, so that the messages in flight
// progress while the CPU computes (a rank has one thread).
using poll_fn = std::function<void()>;

struct energy_sum {
    double energy = 0;  // kinetic + strain energy of the owned cells outside the PML
    double vmax = 0;    // max |v| component over the owned cells
};

class device {
public:
    virtual ~device() = default;
    // Allocates the slab's arrays (zero fields, the medium of the setup). Collective: sim and
    // cuda allocate from hgas's symmetric heaps. Returns "" or what went wrong.
    virtual std::string init(const setup &s) = 0;
    virtual float *field(int f) = 0;  // base of array f (a device address for sim and cuda)
    // Stress update of the cells of part p, then (p all or rim) `src` added to sxx, syy, szz
    // at the source cell when this rank owns it and src != 0 (explosive source). Part
    // interior may return before it is done (cuda: a kernel queued); part rim or all returns
    // with the update complete. `poll` (may be empty) is called between planes on the CPU.
    virtual void stress(double src, part p, const poll_fn &poll) = 0;
    // Velocity update (with the zero-velocity outer faces) of the cells of part p, then (p
    // all or rim) `src` added to the velocity component `dir` at the source cell (force
    // source). As stress() for the parts.
    virtual void velocity(double src, int dir, part p, const poll_fn &poll) = 0;
    // Appends vx, vy, vz of this rank's receivers (setup order) to the record of the run.
    virtual void record() = 0;
    virtual std::vector<float> records() = 0;  // [step][local receiver][3]
    virtual energy_sum energy() = 0;
    virtual void finish() = 0;  // everything queued is done (timing)

    // Face copies for styles basic and pipelined: `rows` rows of nx floats, `stride` floats
    // apart, from array memory to a contiguous host buffer and back, queued on stream `q`
    // (0..nstreams-1). host: memcpy now; sim: hgas_get / hgas_put now; cuda: async copies.
    virtual void to_host(void *dst, const float *src, size_t rows, size_t stride, int q) = 0;
    virtual void to_dev(float *dst, const void *src, size_t rows, size_t stride, int q) = 0;
    virtual void set_streams(int n) = 0;
    // An event after the work queued on stream q so far; done() polls it (true at once on
    // host and sim), sync() waits for the stream.
    virtual int record_event(int q) = 0;
    virtual bool done(int ev) = 0;
    virtual void sync(int q) = 0;
    // Host buffers for the copies (pinned for cuda); the bytes are counted as pinned memory.
    virtual void *alloc_host(size_t bytes) = 0;
    virtual void free_host(void *p) = 0;
    size_t pinned_bytes = 0;
};

std::unique_ptr<device> make_host_device();
std::unique_ptr<device> make_sim_device();
// nullptr with *why set where this build has no CUDA
std::unique_ptr<device> make_cuda_device(std::string *why);

// Fills the medium arrays (lambda, mu, rho) of the slab, halos included, from the layers.
void fill_medium(const setup &s, float *lam, float *mu, float *rho);
// The view of a slab whose arrays start at base (NFIELDS arrays of s.cells floats) and whose
// profiles are at px, py, pz.
view make_view(const setup &s, float *base, const float *px, const float *py, const float *pz);
// The CPU's loops over the owned cells (device_host.cpp; the sim device uses them too).
void cpu_stress(const view &v, const box &b, const poll_fn &poll);
void cpu_velocity(const view &v, const box &b, const poll_fn &poll);
energy_sum cpu_energy(const setup &s, const view &v);

}  // namespace seismic
