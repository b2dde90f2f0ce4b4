// The GPU modes behind one interface. A driver decides who launches the kernels, who moves the
// halos and who waits (seed 003: hybrid, the CPU drives; stream, kernel and device, the GPU
// moves the halos through hgas's device-side API). What is common to every GPU mode (device choice, the field, streams,
// timing, energy, the roofline measurement, the checksum) is in gpu_run.cpp;
// gpu_modes.cpp holds the one switch from mode to driver.
#pragma once

#include <memory>
#include <string>

#include "gpu_field.hpp"
#include "options.hpp"

namespace himeno::gpu {

/// What every driver works with.
struct context {
    const options &o;
    field &f;
    cudaStream_t boundary;  // high priority: the boundary planes, whose halos others wait for
    cudaStream_t bulk;      // the interior, gosa, halo planes
    int lo, n;              // first global interior plane of this rank, planes owned
    kind halo;              // of the receive halo buffers: cuda (host under tests/emu)
};

class driver {
public:
    virtual ~driver() = default;
    /// Collective, before the clock starts: halo buffers when `exchange`, f.init(), and a wait
    /// until the GPU has it.
    virtual void prepare(bool exchange) = 0;
    /// The timed part: o.iters sweeps; returns when the GPU has finished, with gosa of the last
    /// sweep combined over the ranks. Collective.
    virtual double run() = 0;
    /// Collective: frees what prepare() allocated.
    virtual void release() = 0;
};

/// Whether GPU mode `m` is built; `*why` says why not. Needs no hgas and no GPU.
bool gpu_mode_built(mode m, std::string *why);
/// The driver of a built GPU mode.
std::unique_ptr<driver> make_driver(mode m, context &c);

/// hybrid (gpu_hybrid.cpp): the CPU launches kernels, issues the halo puts and waits on
/// events and signals, sleeping between checks.
std::unique_ptr<driver> make_hybrid(context &c);
/// stream, kernel, device (gpu_device_modes.cu; not in himeno-emu): the GPU moves the halos,
/// with stream-ordered operations, from the sweep kernels, or from one persistent kernel.
std::unique_ptr<driver> make_stream(context &c);
std::unique_ptr<driver> make_kernel(context &c);
std::unique_ptr<driver> make_device(context &c);

}  // namespace himeno::gpu
