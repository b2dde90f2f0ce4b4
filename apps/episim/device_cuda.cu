// Backend cuda (device.hpp): cudaMalloc'ed arrays, copies on four streams, and the interaction
// kernels: sort the visits into room order (thrust), one thread per susceptible visit
// evaluating its contacts (model.hpp: infect_visit, the same code the CPU runs), compaction
// of the infections, their sort by person, and the split by destination rank.
#include <cuda_runtime.h>
#include <hgas/hgas.h>
#include <thrust/copy.h>
#include <thrust/execution_policy.h>
#include <thrust/merge.h>
#include <thrust/sort.h>

#include <string>
#include <unordered_map>

#include "device.hpp"

namespace episim {
namespace {

void ck(cudaError_t e, const char *what) {
    if (e != cudaSuccess) throw error(std::string(what) + ": " + cudaGetErrorString(e));
}

struct VisitLess {
    __host__ __device__ bool operator()(const Visit &a, const Visit &b) const { return visit_less(a, b); }
};
struct InfectionLess {
    __host__ __device__ bool operator()(const Infection &a, const Infection &b) const { return infection_less(a, b); }
};
struct Flagged {
    __host__ __device__ bool operator()(uint8_t f) const { return f != 0; }
};

// Thread j: the room's first visit (binary search in the sorted array), then its contacts.
__global__ void infect_kernel(Params p, uint32_t day, const Visit *v, uint64_t n, Infection *tmp, uint8_t *flag) {
    const uint64_t j = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x;
    if (j >= n) return;
    flag[j] = 0;
    if (v[j].state != S) return;
    uint64_t lo = 0, hi = j;  // first index whose room is not before v[j]'s
    while (lo < hi) {
        const uint64_t mid = (lo + hi) / 2;
        const Visit &m = v[mid];
        if (m.loc < v[j].loc || (m.loc == v[j].loc && m.subloc < v[j].subloc)) lo = mid + 1;
        else hi = mid;
    }
    Infection rec;
    if (infect_visit(p, day, v, n, lo, j, &rec)) {
        tmp[j] = rec;
        flag[j] = 1;
    }
}

// Thread r: the first record of a person of rank r (person_begin[r]).
__global__ void split_kernel(const Infection *out, uint64_t m, const uint64_t *pb, uint64_t *first, int nr) {
    const int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= nr) return;
    uint64_t lo = 0, hi = m;
    while (lo < hi) {
        const uint64_t mid = (lo + hi) / 2;
        if (out[mid].person < pb[r]) lo = mid + 1;
        else hi = mid;
    }
    first[r] = lo;
}

class CudaDevice final : public Device {
public:
    CudaDevice() {
        for (auto &s : streams_) ck(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "creating a stream");
    }
    ~CudaDevice() override {
        sync();
        for (auto &e : events_) cudaEventDestroy(e.second);
        cudaFree(tmp_);
        cudaFree(flag_);
        cudaFree(pb_);
        cudaFree(vtmp_);
        for (auto &s : streams_) cudaStreamDestroy(s);
    }
    kind which() const override { return kind::cuda; }
    void *alloc(size_t bytes) override {
        void *p = nullptr;
        ck(cudaMalloc(&p, bytes < 64 ? 64 : bytes), "allocating device memory for the location arrays");
        return p;
    }
    void release(void *p) override { cudaFree(p); }
    void h2d(void *d, const void *h, size_t n, int s) override {
        ck(cudaMemcpyAsync(d, h, n, cudaMemcpyHostToDevice, streams_[s]), "copy to the device");
    }
    void d2h(void *h, const void *d, size_t n, int s) override {
        ck(cudaMemcpyAsync(h, d, n, cudaMemcpyDeviceToHost, streams_[s]), "copy from the device");
    }
    void d2d(void *d, const void *src, size_t n, int s) override {
        ck(cudaMemcpyAsync(d, src, n, cudaMemcpyDeviceToDevice, streams_[s]), "copy within the device");
    }
    int streams() const override { return NSTREAMS; }
    uint64_t record(int s) override {
        cudaEvent_t e;
        ck(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "creating an event");
        ck(cudaEventRecord(e, streams_[s]), "recording an event");
        events_[++next_] = e;
        return next_;
    }
    bool done(uint64_t ev) override {
        if (ev == 0) return true;
        auto it = events_.find(ev);
        if (it == events_.end()) return true;
        const cudaError_t q = cudaEventQuery(it->second);
        if (q == cudaErrorNotReady) return false;
        ck(q, "a device copy");
        cudaEventDestroy(it->second);
        events_.erase(it);
        return true;
    }
    void sync() override {
        for (auto &s : streams_) ck(cudaStreamSynchronize(s), "waiting for the device");
        for (auto &e : events_) cudaEventDestroy(e.second);
        events_.clear();
    }
    // Queued on stream s; thrust does not wait for the stream (par_nosync), so the sort of one
    // fragment runs while the next ones arrive (its temporary storage is still a cudaMalloc).
    uint64_t sort_run(void *vv, uint64_t lo, uint64_t hi, const void *frag, int s) override {
        Visit *v = static_cast<Visit *>(vv);
        if (frag != v + lo) d2d(v + lo, frag, (hi - lo) * sizeof(Visit), s);  // else in place (pipelined)
        const uint64_t ev = record(s);
        thrust::sort(thrust::cuda::par_nosync.on(streams_[s]), v + lo, v + hi, VisitLess{});
        return ev;
    }
    // Merged into scratch, copied back: thrust's merge is not in place.
    void merge_runs(void *vv, uint64_t lo, uint64_t mid, uint64_t hi, int s) override {
        Visit *v = static_cast<Visit *>(vv);
        if (hi - lo > vcap_) {
            ck(cudaStreamSynchronize(streams_[s]), "waiting for the device");  // the old scratch may be in use
            cudaFree(vtmp_);
            vcap_ = 2 * (hi - lo);
            ck(cudaMalloc(&vtmp_, vcap_ * sizeof(Visit)), "device scratch");
        }
        thrust::merge(thrust::cuda::par_nosync.on(streams_[s]), v + lo, v + mid, v + mid, v + hi, vtmp_, VisitLess{});
        ck(cudaMemcpyAsync(v + lo, vtmp_, (hi - lo) * sizeof(Visit), cudaMemcpyDeviceToDevice, streams_[s]),
           "copy within the device");
    }
    uint64_t interactions(void *vv, uint64_t n, void *oo, const Params &p, uint32_t day,
                          const std::vector<uint64_t> &pb, std::vector<uint64_t> &first, bool sorted) override {
        sync();  // every fragment is unpacked
        cudaStream_t st = streams_[0];
        Visit *v = static_cast<Visit *>(vv);
        Infection *out = static_cast<Infection *>(oo);
        if (n > cap_) {
            cudaFree(tmp_);
            cudaFree(flag_);
            ck(cudaMalloc(&tmp_, n * sizeof(Infection)), "device scratch");
            ck(cudaMalloc(&flag_, n), "device scratch");
            cap_ = n;
        }
        if (!pb_) ck(cudaMalloc(&pb_, 2 * pb.size() * sizeof(uint64_t)), "device scratch");
        uint64_t m = 0;
        if (n > 0) {
            if (!sorted) thrust::sort(thrust::cuda::par.on(st), v, v + n, VisitLess{});
            infect_kernel<<<unsigned((n + 255) / 256), 256, 0, st>>>(p, day, v, n, tmp_, flag_);
            ck(cudaGetLastError(), "launching the interaction kernel");
            Infection *end = thrust::copy_if(thrust::cuda::par.on(st), tmp_, tmp_ + n, flag_, out, Flagged{});
            m = uint64_t(end - out);
            thrust::sort(thrust::cuda::par.on(st), out, out + m, InfectionLess{});
        }
        const int nr = int(pb.size());
        ck(cudaMemcpyAsync(pb_, pb.data(), nr * sizeof(uint64_t), cudaMemcpyHostToDevice, st), "copy to the device");
        split_kernel<<<unsigned((nr + 127) / 128), 128, 0, st>>>(out, m, pb_, pb_ + nr, nr);
        ck(cudaGetLastError(), "launching the split kernel");
        first.resize(nr);
        ck(cudaMemcpyAsync(first.data(), pb_ + nr, nr * sizeof(uint64_t), cudaMemcpyDeviceToHost, st),
           "copy from the device");
        ck(cudaStreamSynchronize(st), "the interaction kernels");
        return m;
    }

private:
    static constexpr int NSTREAMS = 4;
    cudaStream_t streams_[NSTREAMS];
    std::unordered_map<uint64_t, cudaEvent_t> events_;
    uint64_t next_ = 0;
    Infection *tmp_ = nullptr;
    uint8_t *flag_ = nullptr;
    uint64_t cap_ = 0;
    uint64_t *pb_ = nullptr;
    Visit *vtmp_ = nullptr;  // merge_runs' scratch
    uint64_t vcap_ = 0;
};

}  // namespace

std::unique_ptr<Device> make_cuda_device(std::string *why) {
    int count = 0;
    const cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0) {
        cudaGetLastError();
        *why = std::string("--kind cuda: no CUDA device is visible here (") +
               (e != cudaSuccess ? cudaGetErrorString(e) : "0 devices") + ")";
        return nullptr;
    }
    if (!hgas_kind_available(HGAS_KIND_CUDA)) {
        *why = "--kind cuda: hgas has no cuda memory on this rank (HGAS_CUDA_HEAP_SIZE is 0?)";
        return nullptr;
    }
    // hgas's rule: a rank's GPU is its local rank modulo the GPUs visible
    ck(cudaSetDevice(hgas_local_rank() % count), "selecting the rank's GPU");
    return std::make_unique<CudaDevice>();
}

}  // namespace episim
