// nas-ft's GPU compute: cuFFT for the local transforms, kernels for the initial field, evolve
// and the checksum, everything on one stream of the rank's GPU. The arrays are device memory
// from hgas's symmetric cuda heap (ft_run.cpp), so the transposes' puts read and write GPU
// memory directly.
#include <cuda_runtime.h>
#include <cufft.h>
#include <hgas/hgas.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <iterator>
#include <map>
#include <utility>
#include <vector>

#include "backend.hpp"
#include "classes.hpp"
#include "npb_random.hpp"
#include "util.hpp"

namespace ft {
namespace {

void ck(cudaError_t e, const char *what) {
    if (e != cudaSuccess) nas::die(std::string("nas-ft: ") + what + ": " + cudaGetErrorString(e));
}
void ckf(cufftResult r, const char *what) {
    if (r != CUFFT_SUCCESS) nas::die(std::string("nas-ft: ") + what + ": cuFFT error " + std::to_string(int(r)));
}

cufftDoubleComplex *dc(cplx *p) { return reinterpret_cast<cufftDoubleComplex *>(p); }

// One thread per row of nx points: the row's start in NPB's sequence by a jump, then 2*nx steps.
__global__ void init_rows(double *u, int nx, int64_t row0, int64_t rows, uint64_t seed, uint64_t a) {
    const int64_t r = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    uint64_t x = nas::mul46(seed, nas::pow46(a, 2 * uint64_t(nx) * uint64_t(row0 + r)));
    double *p = u + 2 * size_t(nx) * size_t(r);
    for (int i = 0; i < 2 * nx; ++i) {
        x = nas::mul46(a, x);
        p[i] = double(x) * nas::kR46;
    }
}

// pencil[z][yl][x] *= fz[z] * fy[y0 + yl] * fx[x] for yl in [ya, yb): the order of the host
// version's products, so both round alike.
__global__ void evolve_rows(double2 *u, const double *fx, const double *fy, const double *fz, int nx, int yc, int y0,
                            int ya, int rows, int64_t total) {
    const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= total) return;
    const int x = int(i % nx);
    const int64_t zr = i / nx;
    const int yl = ya + int(zr % rows), z = int(zr / rows);
    const double f = (fz[z] * fy[y0 + yl]) * fx[x];
    double2 &v = u[(size_t(z) * yc + yl) * nx + x];
    v.x *= f;
    v.y *= f;
}

// The 1024 checksum terms that fall on this rank's planes, summed in a fixed tree.
__global__ void checksum_terms(const double2 *u, int nx, int ny, int nz, int z0, int zc, double2 *out) {
    __shared__ double re[1024], im[1024];
    const int t = threadIdx.x, j = t + 1;
    const int q = j % nx, r = (3 * j) % ny, s = (5 * j) % nz;
    double2 v = make_double2(0, 0);
    if (s >= z0 && s < z0 + zc) v = u[(size_t(s - z0) * ny + r) * nx + q];
    re[t] = v.x;
    im[t] = v.y;
    __syncthreads();
    for (int w = 512; w > 0; w >>= 1) {
        if (t < w) {
            re[t] += re[t + w];
            im[t] += im[t + w];
        }
        __syncthreads();
    }
    if (t == 0) *out = make_double2(re[0], im[0]);
}

class cuda_backend final : public backend {
public:
    cuda_backend(const layout &l, const arrays &a) : l_(l), a_(a) {
        ck(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking), "cudaStreamCreate");
        std::vector<double> fx(l.nx), fy(l.ny), fz(l.nz);
        twiddle_1d(l.nx, fx.data());
        twiddle_1d(l.ny, fy.data());
        twiddle_1d(l.nz, fz.data());
        ck(cudaMalloc(&tw_, sizeof(double) * (l.nx + l.ny + l.nz)), "cudaMalloc (twiddle factors)");
        ck(cudaMemcpy(tw_, fx.data(), sizeof(double) * l.nx, cudaMemcpyHostToDevice), "cudaMemcpy");
        ck(cudaMemcpy(tw_ + l.nx, fy.data(), sizeof(double) * l.ny, cudaMemcpyHostToDevice), "cudaMemcpy");
        ck(cudaMemcpy(tw_ + l.nx + l.ny, fz.data(), sizeof(double) * l.nz, cudaMemcpyHostToDevice), "cudaMemcpy");
        ck(cudaMalloc(&chk_, sizeof(double2)), "cudaMalloc (checksum)");
        for (auto &e : marks_) ck(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreate");
        int v = 0;
        cufftGetVersion(&v);
        name_ = "cuFFT " + std::to_string(v);
    }
    ~cuda_backend() override {
        for (auto &p : plans_) cufftDestroy(p.second);
        for (auto &e : marks_) cudaEventDestroy(e);
        for (auto &p : timing_) {
            cudaEventDestroy(p.first);
            cudaEventDestroy(p.second);
        }
        cudaFree(tw_);
        cudaFree(chk_);
        cudaStreamDestroy(s_);
    }

    const char *name() const override { return name_.c_str(); }
    int threads() const override { return 1; }

    void plan(const arrays &, int group, int chunk) override {
        const int zc = l_.my_zc(), yc = l_.my_yc();
        for (int g : {group, zc % group, zc})
            if (g > 0) xy_plan(g);
        for (int c : {chunk, yc % chunk, yc})
            if (c > 0) z_plan(c);
    }

    void init_field(bool perturb) override {
        const int64_t rows = int64_t(l_.my_zc()) * l_.ny;
        init_rows<<<unsigned((rows + 127) / 128), 128, 0, s_>>>(reinterpret_cast<double *>(a_.slab), l_.nx,
                                                                int64_t(l_.z0[l_.me]) * l_.ny, rows,
                                                                nas::to46(kSeed), nas::to46(kMultiplier));
        ck(cudaGetLastError(), "init_rows");
        if (perturb && l_.z0[l_.me] == 0) {
            sync();
            cplx v;
            ck(cudaMemcpy(&v, a_.slab, sizeof v, cudaMemcpyDeviceToHost), "cudaMemcpy");
            v += cplx(1e-6, 0);
            ck(cudaMemcpy(a_.slab, &v, sizeof v, cudaMemcpyHostToDevice), "cudaMemcpy");
        }
    }

    void fft_xy(int za, int zb, int dir) override {
        if (zb <= za) return;
        cplx *p = a_.slab + size_t(za) * l_.plane();
        timed([&] { ckf(cufftExecZ2Z(xy_plan(zb - za), dc(p), dc(p), dir < 0 ? CUFFT_FORWARD : CUFFT_INVERSE),
                        "cufftExecZ2Z (x-y)"); });
    }

    void fft_z_forward(int ya, int yb) override {
        if (yb <= ya) return;
        cplx *p = a_.pencil + size_t(ya) * l_.nx;
        timed([&] { ckf(cufftExecZ2Z(z_plan(yb - ya), dc(p), dc(p), CUFFT_FORWARD), "cufftExecZ2Z (z)"); });
    }

    void evolve_inverse_z(int ya, int yb) override {
        if (yb <= ya) return;
        const int rows = yb - ya;
        const int64_t total = int64_t(l_.nz) * rows * l_.nx;
        evolve_rows<<<unsigned((total + 255) / 256), 256, 0, s_>>>(
            reinterpret_cast<double2 *>(a_.pencil), tw_, tw_ + l_.nx, tw_ + l_.nx + l_.ny, l_.nx, l_.my_yc(),
            l_.y0[l_.me], ya, rows, total);
        ck(cudaGetLastError(), "evolve_rows");
        const size_t off = size_t(ya) * l_.nx;
        timed([&] {
            ckf(cufftExecZ2Z(z_plan(rows), dc(a_.pencil + off), dc(a_.work + off), CUFFT_INVERSE),
                "cufftExecZ2Z (inverse z)");
        });
    }

    cplx checksum() override {
        checksum_terms<<<1, 1024, 0, s_>>>(reinterpret_cast<const double2 *>(a_.slab), l_.nx, l_.ny, l_.nz,
                                           l_.z0[l_.me], l_.my_zc(), reinterpret_cast<double2 *>(chk_));
        ck(cudaGetLastError(), "checksum_terms");
        cplx v;
        ck(cudaMemcpyAsync(&v, chk_, sizeof v, cudaMemcpyDeviceToHost, s_), "cudaMemcpyAsync");
        sync();
        return v;
    }

    void copy2d(cplx *dst, size_t dpitch, const cplx *src, size_t spitch, size_t width, size_t rows) override {
        const size_t c = sizeof(cplx);
        ck(cudaMemcpy2DAsync(dst, dpitch * c, src, spitch * c, width * c, rows, cudaMemcpyDeviceToDevice, s_),
           "cudaMemcpy2DAsync");
    }

    void sync() override {
        ck(cudaStreamSynchronize(s_), "cudaStreamSynchronize");
        collect();
    }

    int mark() override {
        const int m = next_mark_++ % int(std::size(marks_));
        ck(cudaEventRecord(marks_[m], s_), "cudaEventRecord");
        return m;
    }
    void wait_mark(int m) override { ck(cudaEventSynchronize(marks_[m]), "cudaEventSynchronize"); }

    double device_fft_seconds(bool reset) override {
        sync();
        const double s = fft_s_;
        if (reset) fft_s_ = 0;
        return s;
    }

    // cuFFT's own 3-D transform of the whole grid (forward, in place, on scratch memory), the
    // median of `reps` after one untimed run.
    double library_3d_seconds(int reps) override {
        const size_t n = size_t(l_.nx) * l_.ny * l_.nz;
        cufftDoubleComplex *buf = nullptr;
        if (cudaMalloc(&buf, n * sizeof(cplx)) != cudaSuccess) {
            cudaGetLastError();
            return -1;  // no room beside the field
        }
        cufftHandle p;
        ckf(cufftPlan3d(&p, l_.nz, l_.ny, l_.nx, CUFFT_Z2Z), "cufftPlan3d");
        ckf(cufftSetStream(p, s_), "cufftSetStream");
        ck(cudaMemsetAsync(buf, 0, n * sizeof(cplx), s_), "cudaMemsetAsync");
        ckf(cufftExecZ2Z(p, buf, buf, CUFFT_FORWARD), "cufftExecZ2Z (3-D)");
        cudaEvent_t a, b;
        ck(cudaEventCreate(&a), "cudaEventCreate");
        ck(cudaEventCreate(&b), "cudaEventCreate");
        std::vector<double> t;
        for (int i = 0; i < reps; ++i) {
            ck(cudaEventRecord(a, s_), "cudaEventRecord");
            ckf(cufftExecZ2Z(p, buf, buf, CUFFT_FORWARD), "cufftExecZ2Z (3-D)");
            ck(cudaEventRecord(b, s_), "cudaEventRecord");
            ck(cudaEventSynchronize(b), "cudaEventSynchronize");
            float ms = 0;
            ck(cudaEventElapsedTime(&ms, a, b), "cudaEventElapsedTime");
            t.push_back(ms * 1e-3);
        }
        cudaEventDestroy(a);
        cudaEventDestroy(b);
        cufftDestroy(p);
        cudaFree(buf);
        std::sort(t.begin(), t.end());
        return t[t.size() / 2];
    }

private:
    // Times one cuFFT call on the stream with a pair of events, read back at the next sync().
    template <class F>
    void timed(F &&f) {
        std::pair<cudaEvent_t, cudaEvent_t> ev;
        if (!free_.empty()) {
            ev = free_.back();
            free_.pop_back();
        } else {
            ck(cudaEventCreate(&ev.first), "cudaEventCreate");
            ck(cudaEventCreate(&ev.second), "cudaEventCreate");
            timing_.push_back(ev);
        }
        ck(cudaEventRecord(ev.first, s_), "cudaEventRecord");
        f();
        ck(cudaEventRecord(ev.second, s_), "cudaEventRecord");
        pending_.push_back(ev);
    }
    void collect() {
        for (auto &ev : pending_) {
            float ms = 0;
            ck(cudaEventElapsedTime(&ms, ev.first, ev.second), "cudaEventElapsedTime");
            fft_s_ += ms * 1e-3;
            free_.push_back(ev);
        }
        pending_.clear();
    }

    cufftHandle xy_plan(int g) {
        auto it = plans_.find({0, g});
        if (it != plans_.end()) return it->second;
        int n[2] = {l_.ny, l_.nx};
        const int dist = int(l_.plane());
        cufftHandle p;
        ckf(cufftPlanMany(&p, 2, n, nullptr, 1, dist, nullptr, 1, dist, CUFFT_Z2Z, g), "cufftPlanMany (x-y)");
        ckf(cufftSetStream(p, s_), "cufftSetStream");
        return plans_[{0, g}] = p;
    }
    cufftHandle z_plan(int c) {
        auto it = plans_.find({1, c});
        if (it != plans_.end()) return it->second;
        int n[1] = {l_.nz}, embed[1] = {l_.nz};
        const int stride = l_.my_yc() * l_.nx;
        cufftHandle p;
        ckf(cufftPlanMany(&p, 1, n, embed, stride, 1, embed, stride, 1, CUFFT_Z2Z, c * l_.nx), "cufftPlanMany (z)");
        ckf(cufftSetStream(p, s_), "cufftSetStream");
        return plans_[{1, c}] = p;
    }

    const layout &l_;
    arrays a_;
    cudaStream_t s_ = nullptr;
    double *tw_ = nullptr;
    double *chk_ = nullptr;
    std::map<std::pair<int, int>, cufftHandle> plans_;
    cudaEvent_t marks_[64] = {};
    int next_mark_ = 0;
    std::vector<std::pair<cudaEvent_t, cudaEvent_t>> timing_, free_, pending_;
    double fft_s_ = 0;
    std::string name_;
};

}  // namespace

bool cuda_memory_total(size_t *bytes) {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
        cudaGetLastError();
        return false;
    }
    size_t least = SIZE_MAX;
    for (int d = 0; d < count; ++d) {
        cudaDeviceProp prop;
        if (cudaGetDeviceProperties(&prop, d) != cudaSuccess) {
            cudaGetLastError();
            return false;
        }
        least = std::min(least, size_t(prop.totalGlobalMem));
    }
    *bytes = least;
    return true;
}

std::string cuda_pci_bus_id(bool *counts) {
    int count = 0;
    *counts = false;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
        cudaGetLastError();
        return "";
    }
    const int local = hgas_local_rank(), dev = local % count;  // as hgas maps ranks to GPUs
    ck(cudaSetDevice(dev), "cudaSetDevice");
    char bus[32] = {};
    ck(cudaDeviceGetPCIBusId(bus, sizeof bus, dev), "cudaDeviceGetPCIBusId");
    *counts = local < count;  // the first rank on each GPU counts its energy
    return bus;
}

std::unique_ptr<backend> make_cuda_backend(const layout &l, const arrays &a, std::string *why) {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
        cudaGetLastError();
        *why = "no CUDA device is visible";
        return nullptr;
    }
    ck(cudaSetDevice(hgas_local_rank() % count), "cudaSetDevice");
    return std::make_unique<cuda_backend>(l, a);
}

}  // namespace ft
