// Kind cuda: the arrays in the rank's GPU memory, updated by kernels that call the same
// per-cell functions as the CPU (kernels.hpp). The nine wave fields are one allocation in
// hgas's symmetric cuda heap (so that hgas moves faces between GPUs by its one-sided paths);
// the memory variables and the medium, which never leave the GPU, are a cudaMalloc.
#include <cuda_runtime.h>
#include <hgas/hgas.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "device.hpp"

namespace seismic {
namespace {

#define CK(call) ck((call), #call, __FILE__, __LINE__)
void ck(cudaError_t e, const char *what, const char *file, int line) {
    if (e != cudaSuccess) {
        char m[400];
        std::snprintf(m, sizeof m, "seismic: %s failed at %s:%d: %s", what, file, line, cudaGetErrorString(e));
        hgas_abort(1, m);
    }
}

// one thread per cell of box b (all i)
__global__ void k_stress(view v, box b) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x, j = b.j0 + blockIdx.y * blockDim.y + threadIdx.y;
    const int k = b.k0 + blockIdx.z;
    if (i < v.nx && j < b.j1) stress_cell(v, i, j, k);
}

__global__ void k_velocity(view v, box b) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x, j = b.j0 + blockIdx.y * blockDim.y + threadIdx.y;
    const int k = b.k0 + blockIdx.z;
    if (i < v.nx && j < b.j1) velocity_cell(v, i, j, k);
}

// one thread: the source added to fields f0..f1 at cell c
__global__ void k_add(view v, size_t c, int f0, int f1, float a) {
    for (int f = f0; f <= f1; ++f) v.f[f][c] += a;
}

__global__ void k_record(view v, const size_t *cells, int n, float *out) {
    const int q = blockIdx.x * blockDim.x + threadIdx.x;
    if (q < n)
        for (int f = VX; f <= VZ; ++f) out[q * 3 + f] = v.f[f][cells[q]];
}

// energy (double atomics: the order of the sum varies, so energy is not bitwise reproducible
// on the GPU; the seismograms are) and max |v| (non-negative floats compare as integers)
__global__ void k_energy(view v, int npml, double *e, unsigned *vmax) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x, j = v.j0 + blockIdx.y * blockDim.y + threadIdx.y;
    const int k = v.k0 + blockIdx.z;
    if (i >= v.nx || j >= v.j0 + v.nyl) return;
    const size_t c = v.at(i, j, k);
    const float m = fmaxf(fabsf(v.f[VX][c]), fmaxf(fabsf(v.f[VY][c]), fabsf(v.f[VZ][c])));
    atomicMax(vmax, __float_as_uint(m));
    const bool pml = i < npml || i > v.nx - 1 - npml || j < npml || j > v.ny - 1 - npml || k < npml || k > v.nz - 1 - npml;
    if (!pml) atomicAdd(e, cell_energy(v, c));
}

class cuda_device : public device {
public:
    ~cuda_device() override {
        if (wave_) hgas_free(wave_);
        cudaFree(rest_);
        cudaFree(prof_);
        cudaFree(rec_d_);
        cudaFree(cells_d_);
        cudaFree(sum_d_);
        for (cudaEvent_t e : events_) cudaEventDestroy(e);
        for (cudaStream_t q : streams_) cudaStreamDestroy(q);
        if (cs_) cudaStreamDestroy(cs_);
    }
    std::string init(const setup &s) override {
        s_ = &s;
        int ngpu = 0;
        if (cudaGetDeviceCount(&ngpu) != cudaSuccess || ngpu == 0) return "--kind cuda: no GPU visible to this rank";
        if (!hgas_kind_available(HGAS_KIND_CUDA)) return "--kind cuda: hgas has no cuda memory (HGAS_CUDA_HEAP_SIZE 0?)";
        CK(cudaSetDevice(hgas_local_rank() % ngpu));
        CK(cudaStreamCreateWithFlags(&cs_, cudaStreamNonBlocking));
        uint64_t mine = s.cells, most = 0;
        if (hgas_allreduce(&most, &mine, 1, HGAS_UINT64, HGAS_OP_MAX) != HGAS_OK) return "allreduce of the slab size failed";
        const size_t wbytes = static_cast<size_t>(most) * k_wave_fields * sizeof(float);
        void *p = nullptr;
        if (hgas_malloc_kind(wbytes, HGAS_KIND_CUDA, &p) != HGAS_OK)
            return "--kind cuda: allocating " + std::to_string(wbytes >> 20) +
                   " MiB of hgas cuda memory for the wave fields failed; raise HGAS_CUDA_HEAP_SIZE";
        wave_ = static_cast<float *>(p);
        const size_t cb = s.cells * sizeof(float);
        CK(cudaMalloc(&rest_, cb * (NFIELDS - k_wave_fields)));
        CK(cudaMemset(wave_, 0, cb * k_wave_fields));
        CK(cudaMemset(rest_, 0, cb * (NFIELDS - k_wave_fields)));
        std::vector<float> med(s.cells * 3);
        fill_medium(s, med.data(), med.data() + s.cells, med.data() + 2 * s.cells);
        for (int f = 0; f < NFIELDS; ++f) v_.f[f] = field(f);
        CK(cudaMemcpy(v_.f[LAM], med.data(), cb * 3, cudaMemcpyHostToDevice));  // LAM, MU, RHO are adjacent
        const size_t np = s.prof_x.size() + s.prof_y.size() + s.prof_z.size();
        CK(cudaMalloc(&prof_, np * sizeof(float)));
        CK(cudaMemcpy(prof_, s.prof_x.data(), s.prof_x.size() * 4, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(prof_ + s.prof_x.size(), s.prof_y.data(), s.prof_y.size() * 4, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(prof_ + s.prof_x.size() + s.prof_y.size(), s.prof_z.data(), s.prof_z.size() * 4,
                      cudaMemcpyHostToDevice));
        view t = make_view(s, nullptr, prof_, prof_ + s.prof_x.size(), prof_ + s.prof_x.size() + s.prof_y.size());
        for (int f = 0; f < NFIELDS; ++f) t.f[f] = v_.f[f];
        v_ = t;
        std::vector<size_t> cells;
        for (const receiver &r : s.recs)
            if (r.owner == s.rank) cells.push_back(s.at(r.i, r.j, r.k));
        nrec_ = static_cast<int>(cells.size());
        if (nrec_) {
            CK(cudaMalloc(&cells_d_, cells.size() * sizeof(size_t)));
            CK(cudaMemcpy(cells_d_, cells.data(), cells.size() * sizeof(size_t), cudaMemcpyHostToDevice));
            CK(cudaMalloc(&rec_d_, static_cast<size_t>(s.opt.steps) * nrec_ * 3 * sizeof(float)));
        }
        CK(cudaMalloc(&sum_d_, sizeof(double) + sizeof(unsigned)));
        grid_ = dim3((s.opt.nx + 31) / 32, (s.nyl + 3) / 4, s.nzl);
        return "";
    }
    float *field(int f) override {
        return f < k_wave_fields ? wave_ + static_cast<size_t>(f) * s_->cells
                                 : rest_ + static_cast<size_t>(f - k_wave_fields) * s_->cells;
    }
    // Part interior only queues its kernel: it runs while the halo messages are in flight
    // (they touch other arrays: the halos, and the faces of the fields it reads). Part rim
    // or all queues its kernels behind it and waits, since the exchange reads the faces next.
    void stress(double src, part p, const poll_fn &) override {
        for (const box &b : boxes(*s_, p)) {
            k_stress<<<grid(b), dim3(32, 4), 0, cs_>>>(v_, b);
            CK(cudaGetLastError());
        }
        if (p == part::interior) return;
        if (src != 0 && s_->src_owner == s_->rank)
            k_add<<<1, 1, 0, cs_>>>(v_, s_->at(s_->opt.si, s_->opt.sj, s_->opt.sk), SXX, SZZ, static_cast<float>(src));
        CK(cudaStreamSynchronize(cs_));
    }
    void velocity(double src, int dir, part p, const poll_fn &) override {
        for (const box &b : boxes(*s_, p)) {
            k_velocity<<<grid(b), dim3(32, 4), 0, cs_>>>(v_, b);
            CK(cudaGetLastError());
        }
        if (p == part::interior) return;
        if (src != 0 && s_->src_owner == s_->rank)
            k_add<<<1, 1, 0, cs_>>>(v_, s_->at(s_->opt.si, s_->opt.sj, s_->opt.sk), VX + dir, VX + dir,
                                    static_cast<float>(src));
        CK(cudaStreamSynchronize(cs_));
    }
    void record() override {
        if (nrec_) k_record<<<1, 256, 0, cs_>>>(v_, cells_d_, nrec_, rec_d_ + static_cast<size_t>(step_) * nrec_ * 3);
        ++step_;
    }
    std::vector<float> records() override {
        std::vector<float> r(static_cast<size_t>(step_) * nrec_ * 3);
        if (!r.empty()) CK(cudaMemcpy(r.data(), rec_d_, r.size() * sizeof(float), cudaMemcpyDeviceToHost));
        return r;
    }
    energy_sum energy() override {
        CK(cudaMemsetAsync(sum_d_, 0, sizeof(double) + sizeof(unsigned), cs_));
        k_energy<<<grid_, dim3(32, 4), 0, cs_>>>(v_, s_->opt.npml, reinterpret_cast<double *>(sum_d_),
                                                 reinterpret_cast<unsigned *>(sum_d_ + sizeof(double)));
        CK(cudaGetLastError());
        char h[sizeof(double) + sizeof(unsigned)];
        CK(cudaMemcpyAsync(h, sum_d_, sizeof h, cudaMemcpyDeviceToHost, cs_));
        CK(cudaStreamSynchronize(cs_));
        energy_sum e;
        float m;
        std::memcpy(&e.energy, h, sizeof(double));
        std::memcpy(&m, h + sizeof(double), sizeof(float));
        e.vmax = m;
        return e;
    }
    void finish() override { CK(cudaDeviceSynchronize()); }
    dim3 grid(const box &b) const {
        return dim3((s_->opt.nx + 31) / 32, (b.j1 - b.j0 + 3) / 4, b.k1 - b.k0);
    }
    void to_host(void *dst, const float *src, size_t rows, size_t stride, int q) override {
        const size_t w = s_->opt.nx * sizeof(float);
        CK(cudaMemcpy2DAsync(dst, w, src, stride * sizeof(float), w, rows, cudaMemcpyDeviceToHost, streams_[q]));
    }
    void to_dev(float *dst, const void *src, size_t rows, size_t stride, int q) override {
        const size_t w = s_->opt.nx * sizeof(float);
        CK(cudaMemcpy2DAsync(dst, stride * sizeof(float), src, w, w, rows, cudaMemcpyHostToDevice, streams_[q]));
    }
    void set_streams(int n) override {
        while (static_cast<int>(streams_.size()) < n) {
            cudaStream_t q;
            CK(cudaStreamCreateWithFlags(&q, cudaStreamNonBlocking));
            streams_.push_back(q);
        }
    }
    // A ring of events: an event is polled before the ring comes round (a phase uses far fewer).
    int record_event(int q) override {
        if (events_.size() < k_events) {
            cudaEvent_t e;
            CK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
            events_.push_back(e);
        }
        const int id = static_cast<int>(next_++ % k_events);
        CK(cudaEventRecord(events_[id], streams_[q]));
        return id;
    }
    bool done(int ev) override {
        const cudaError_t e = cudaEventQuery(events_[ev]);
        if (e == cudaErrorNotReady) return false;
        CK(e);
        return true;
    }
    void sync(int q) override { CK(cudaStreamSynchronize(streams_[q])); }
    void *alloc_host(size_t bytes) override {
        void *p = nullptr;
        CK(cudaHostAlloc(&p, bytes, cudaHostAllocDefault));
        return p;
    }
    void free_host(void *p) override { cudaFreeHost(p); }

private:
    static constexpr size_t k_events = 4096;
    const setup *s_ = nullptr;
    float *wave_ = nullptr, *rest_ = nullptr, *prof_ = nullptr, *rec_d_ = nullptr;
    size_t *cells_d_ = nullptr;
    char *sum_d_ = nullptr;
    int nrec_ = 0, step_ = 0;
    view v_{};
    dim3 grid_;
    cudaStream_t cs_ = nullptr;
    std::vector<cudaStream_t> streams_;
    std::vector<cudaEvent_t> events_;
    size_t next_ = 0;
};

}  // namespace

std::unique_ptr<device> make_cuda_device(std::string *) { return std::make_unique<cuda_device>(); }

}  // namespace seismic
