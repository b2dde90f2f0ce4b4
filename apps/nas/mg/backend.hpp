// The operators of MG on one rank's blocks, for the CPU (ops_host.cpp) and the GPU
// (ops_cuda.cu). Every operator works on boxes (geometry.hpp) in the backend's memory; the
// V-cycle (vcycle.cpp) and the halo exchange (comm.cpp) are written once above them.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "geometry.hpp"

namespace mg {

class backend {
public:
    virtual ~backend() = default;
    virtual const char *name() const = 0;
    /// Compute threads of this rank (1 on the GPU: the CPU only drives it).
    virtual int threads() const { return 1; }
    /// Memory for `count` doubles of grid (host memory, or the symmetric cuda heap:
    /// collective there, every rank asks for the same sizes in the same order).
    virtual double *alloc(size_t count) = 0;
    virtual void release(double *p) = 0;
    /// Scratch buffers for faces (host memory or device memory of the backend).
    virtual double *alloc_scratch(size_t count) = 0;
    virtual void release_scratch(double *p) = 0;

    virtual void zero(box b) = 0;
    /// r = v - A u on the points 1..n (NPB's resid; v and r may be the same box).
    virtual void resid(box u, box v, box r, const double a[4]) = 0;
    /// u = u + S r on the points 1..n (NPB's psinv, the smoother).
    virtual void psinv(box r, box u, const double c[4]) = 0;
    /// coarse = P fine on the coarse points 1..n (NPB's rprj3, full weighting): coarse point j
    /// sits on fine point 2j.
    virtual void rprj3(box fine, box coarse) = 0;
    /// fine += Q coarse on every fine point, ghosts included (NPB's interp, trilinear). `coff`:
    /// where the fine block's coarse parent starts inside `coarse` (0 when coarse is the fine
    /// block's own coarse block; the block's offset / 2 when coarse is the whole grid).
    virtual void interp(box coarse, box fine, const int coff[3]) = 0;
    /// Sum of squares and largest magnitude over the points 1..n (NPB's norm2u3, local part).
    virtual void norm2(box r, double *sum, double *max) = 0;

    /// Copies region `g` of box b into buf (contiguous, i1 fastest), and back.
    virtual void pack(box b, const region &g, double *buf) = 0;
    virtual void unpack(box b, const region &g, const double *buf) = 0;
    /// Copies region `from` of b onto region `to` (same shape): periodic wrap on one rank.
    virtual void copy(box b, const region &from, const region &to) = 0;
    /// Host <-> backend memory.
    virtual void upload(double *dst, const double *host, size_t count) = 0;
    virtual void download(double *host, const double *src, size_t count) = 0;
    /// Returns when the work queued so far is done (the GPU's stream; nothing on the CPU).
    virtual void sync() = 0;
    /// PCI bus id of the GPU ("" on the CPU), for its NVML energy counter.
    virtual std::string pci_bus_id() const { return ""; }
    /// Whether this rank reads its GPU's energy counter (the first rank on each GPU does).
    virtual bool counts_energy() const { return false; }
    /// A line describing the device (empty on the CPU).
    virtual std::string device() const { return ""; }
};

/// The CPU operators, the planes of each shared out over `threads` threads.
std::unique_ptr<backend> make_host_backend(int threads);
/// nullptr with *why when this build or machine has no GPU.
std::unique_ptr<backend> make_cuda_backend(std::string *why);

}  // namespace mg
