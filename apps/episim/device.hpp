// Where the locations' side of the simulation runs: the visit arrays a rank receives, the
// interaction "kernels" and the infection records they produce. Three backends:
//   host  device memory is host memory, kernels are CPU functions;
//   sim   device memory is hgas sim memory (reachable only through hgas calls, with a copy
//         engine of set latency and bandwidth), kernels run on the CPU on copies of it: every
//         device path of the three styles runs on a machine without a GPU;
//   cuda  cudaMalloc'ed memory, copies on streams, kernels on the GPU (device_cuda.cu).
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "model.hpp"

namespace episim {

enum class kind { host, sim, cuda };

struct error : std::runtime_error {
    using std::runtime_error::runtime_error;
};
// Throws episim::error with `what` and hgas's message when an hgas call fails.
void check(int status, const std::string &what);

class Device {
public:
    virtual ~Device();
    virtual kind which() const = 0;
    // Device memory, fixed for the run. sim: collective (every rank allocates the same sizes
    // in the same order).
    virtual void *alloc(size_t bytes) = 0;
    virtual void release(void *p) = 0;
    // Copies queued on stream s (0 .. streams()-1): asynchronous where the device is; buffers
    // stay in use until an event recorded after them is done.
    virtual void h2d(void *d, const void *h, size_t n, int s) = 0;
    virtual void d2h(void *h, const void *d, size_t n, int s) = 0;
    virtual void d2d(void *d, const void *src, size_t n, int s) = 0;
    virtual int streams() const { return 1; }
    // An event after everything queued so far on stream s; 0 means "already done".
    virtual uint64_t record(int s) = 0;
    virtual bool done(uint64_t ev) = 0;
    virtual void sync() = 0;  // every stream
    // The interaction kernels on visits v[0, n) (device memory): sort them into room order,
    // find each susceptible visit's infection (model.hpp: infect_visit) into out (capacity n),
    // sort those by person. Returns their number; first[r] is the index of the first record
    // of a person of rank r (person_begin: the partition's person blocks).
    // sorted: v[0, n) is in room order already (sort_run / merge_runs below): no sort.
    virtual uint64_t interactions(void *v, uint64_t n, void *out, const Params &p, uint32_t day,
                                  const std::vector<uint64_t> &person_begin, std::vector<uint64_t> &first,
                                  bool sorted) = 0;
    // The sort pipelined with the arriving fragments (styles integrated and pipelined):
    // sort_run moves the visits of a fragment `frag` (device memory; frag == v + lo: they are
    // there already, copied by the pipelined style) into v[lo, hi) and sorts them there into
    // room order, returning an event after which frag may be reused; merge_runs merges the
    // sorted neighbours v[lo, mid) and v[mid, hi) into one sorted run. Both are queued on
    // stream s after what is queued there. Room order is a total order on distinct visits,
    // so sorting runs and merging them gives the bytes one sort of the whole gives.
    virtual uint64_t sort_run(void *v, uint64_t lo, uint64_t hi, const void *frag, int s) = 0;
    virtual void merge_runs(void *v, uint64_t lo, uint64_t mid, uint64_t hi, int s) = 0;

    // Page-locked host memory for copies with the device (hgas_register: pinned where CUDA
    // is, recorded elsewhere). Counted: pinned_bytes() is what this rank holds.
    void *pinned(size_t bytes);
    void unpin(void *p);
    size_t pinned_bytes() const { return pinned_; }
    size_t pinned_peak() const { return pinned_peak_; }

private:
    std::vector<std::pair<void *, size_t>> pins_;
    size_t pinned_ = 0, pinned_peak_ = 0;
};

// The device of kind k, or nullptr and *why.
std::unique_ptr<Device> make_device(kind k, std::string *why);
std::unique_ptr<Device> make_cuda_device(std::string *why);  // device_cuda.cu / device_none.cpp

// The CPU version of Device::interactions on host arrays (also the reference).
uint64_t interactions_cpu(Visit *v, uint64_t n, Infection *out, const Params &p, uint32_t day,
                          const std::vector<uint64_t> &person_begin, std::vector<uint64_t> &first, bool sorted);
void sort_run_cpu(Visit *v, uint64_t lo, uint64_t hi);
void merge_runs_cpu(Visit *v, uint64_t lo, uint64_t mid, uint64_t hi);

}  // namespace episim
