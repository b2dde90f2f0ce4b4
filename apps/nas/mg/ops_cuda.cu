// MG's operators on the GPU: one thread per point, each point computed with NPB's expression
// in NPB's order (built with -fmad=false, so every product and sum rounds as on the CPU: the
// grids and the norm are bitwise those of ops_host.cpp on the same decomposition). The grids
// live in hgas's symmetric cuda heap; faces are packed by kernels into device scratch buffers
// that hgas puts from directly.
#include <cuda_runtime.h>
#include <hgas/hgas.h>
#include <sched.h>

#include <cmath>
#include <string>
#include <vector>

#include "backend.hpp"
#include "util.hpp"

namespace mg {
namespace {

void cuda_fail(cudaError_t e, const char *call, int line) {
    std::string m = std::string(nas::program()) + ": rank " + std::to_string(hgas_rank_me()) + ": CUDA error " +
                    cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ") from " + call + " at ops_cuda.cu:" +
                    std::to_string(line);
    if (e == cudaErrorNoKernelImageForDevice || e == cudaErrorInvalidDeviceFunction)
        m += "; this nas-mg has no code for this GPU: configure with -DCMAKE_CUDA_ARCHITECTURES=<its compute "
             "capability, e.g. 90> and rebuild";
    nas::die(m);
}
#define CK(call)                                              \
    do {                                                      \
        const cudaError_t e_ = (call);                        \
        if (e_ != cudaSuccess) cuda_fail(e_, #call, __LINE__); \
    } while (0)
#define LAUNCHED(name)                                                         \
    do {                                                                       \
        const cudaError_t e_ = cudaGetLastError();                             \
        if (e_ != cudaSuccess) cuda_fail(e_, "the launch of " name, __LINE__); \
    } while (0)

// A box's shape on the device: (n1+2) x (n2+2) x (n3+2), i1 fastest.
struct shape {
    int n1, n2, n3;
    __host__ __device__ size_t at(int i1, int i2, int i3) const {
        return size_t(i1) + size_t(n1 + 2) * (size_t(i2) + size_t(n2 + 2) * size_t(i3));
    }
};
shape shape_of(const box &b) { return shape{b.n1, b.n2, b.n3}; }

constexpr int kBlock1 = 64, kBlock2 = 4;
dim3 grid_for(int n1, int n2, int n3) {
    return dim3(unsigned((n1 + kBlock1 - 1) / kBlock1), unsigned((n2 + kBlock2 - 1) / kBlock2), unsigned(n3));
}

// Sum of the four face neighbours (u1 of resid, r1 of psinv, x1 of rprj3) and of the four edge
// neighbours in the (i2, i3) plane (u2, r2, y1), in NPB's order.
__device__ inline double faces(const double *u, shape s, int i1, int i2, int i3) {
    return u[s.at(i1, i2 - 1, i3)] + u[s.at(i1, i2 + 1, i3)] + u[s.at(i1, i2, i3 - 1)] + u[s.at(i1, i2, i3 + 1)];
}
__device__ inline double edges_resid(const double *u, shape s, int i1, int i2, int i3) {
    return u[s.at(i1, i2 - 1, i3 - 1)] + u[s.at(i1, i2 + 1, i3 - 1)] + u[s.at(i1, i2 - 1, i3 + 1)] +
           u[s.at(i1, i2 + 1, i3 + 1)];
}
__device__ inline double edges_rprj3(const double *r, shape s, int i1, int i2, int i3) {
    return r[s.at(i1, i2 - 1, i3 - 1)] + r[s.at(i1, i2 - 1, i3 + 1)] + r[s.at(i1, i2 + 1, i3 - 1)] +
           r[s.at(i1, i2 + 1, i3 + 1)];
}

__global__ void k_resid(const double *u, const double *v, double *r, shape s, double a0, double a2, double a3) {
    const int i1 = blockIdx.x * blockDim.x + threadIdx.x + 1, i2 = blockIdx.y * blockDim.y + threadIdx.y + 1,
              i3 = blockIdx.z + 1;
    if (i1 > s.n1 || i2 > s.n2) return;
    const double u1m = faces(u, s, i1 - 1, i2, i3), u1p = faces(u, s, i1 + 1, i2, i3);
    const double u2 = edges_resid(u, s, i1, i2, i3), u2m = edges_resid(u, s, i1 - 1, i2, i3),
                 u2p = edges_resid(u, s, i1 + 1, i2, i3);
    const size_t p = s.at(i1, i2, i3);
    r[p] = v[p] - a0 * u[p] - a2 * (u2 + u1m + u1p) - a3 * (u2m + u2p);
}

__global__ void k_psinv(const double *r, double *u, shape s, double c0, double c1, double c2) {
    const int i1 = blockIdx.x * blockDim.x + threadIdx.x + 1, i2 = blockIdx.y * blockDim.y + threadIdx.y + 1,
              i3 = blockIdx.z + 1;
    if (i1 > s.n1 || i2 > s.n2) return;
    const double r1 = faces(r, s, i1, i2, i3), r1m = faces(r, s, i1 - 1, i2, i3), r1p = faces(r, s, i1 + 1, i2, i3);
    const double r2 = edges_resid(r, s, i1, i2, i3);
    const size_t p = s.at(i1, i2, i3);
    u[p] = u[p] + c0 * r[p] + c1 * (r[s.at(i1 - 1, i2, i3)] + r[s.at(i1 + 1, i2, i3)] + r1) + c2 * (r2 + r1m + r1p);
}

__global__ void k_rprj3(const double *r, shape f, double *sv, shape s) {
    const int j1 = blockIdx.x * blockDim.x + threadIdx.x + 1, j2 = blockIdx.y * blockDim.y + threadIdx.y + 1,
              j3 = blockIdx.z + 1;
    if (j1 > s.n1 || j2 > s.n2) return;
    const int i1 = 2 * j1, i2 = 2 * j2, i3 = 2 * j3;
    const double x1m = faces(r, f, i1 - 1, i2, i3), x1p = faces(r, f, i1 + 1, i2, i3);
    const double y1m = edges_rprj3(r, f, i1 - 1, i2, i3), y1p = edges_rprj3(r, f, i1 + 1, i2, i3);
    const double y2 = edges_rprj3(r, f, i1, i2, i3), x2 = faces(r, f, i1, i2, i3);
    sv[s.at(j1, j2, j3)] = 0.5 * r[f.at(i1, i2, i3)] + 0.25 * (r[f.at(i1 - 1, i2, i3)] + r[f.at(i1 + 1, i2, i3)] + x2) +
                           0.125 * (x1m + x1p + y2) + 0.0625 * (y1m + y1p);
}

__global__ void k_interp(const double *z, shape zs, double *u, shape us, int o1, int o2, int o3) {
    const int l1 = blockIdx.x * blockDim.x + threadIdx.x, l2 = blockIdx.y * blockDim.y + threadIdx.y, l3 = blockIdx.z;
    if (l1 > us.n1 + 1 || l2 > us.n2 + 1) return;
    const int c1 = (l1 >> 1) + o1, c2 = (l2 >> 1) + o2, c3 = (l3 >> 1) + o3;
    const bool mid = l1 & 1;
    auto Z = [&](int a, int b, int c) { return z[zs.at(a, b, c)]; };
    double val;
    switch ((l2 & 1) | ((l3 & 1) << 1)) {
    case 0:
        val = mid ? 0.5 * (Z(c1 + 1, c2, c3) + Z(c1, c2, c3)) : Z(c1, c2, c3);
        break;
    case 1: {
        const double a = Z(c1, c2 + 1, c3) + Z(c1, c2, c3);
        val = mid ? 0.25 * (a + (Z(c1 + 1, c2 + 1, c3) + Z(c1 + 1, c2, c3))) : 0.5 * a;
        break;
    }
    case 2: {
        const double a = Z(c1, c2, c3 + 1) + Z(c1, c2, c3);
        val = mid ? 0.25 * (a + (Z(c1 + 1, c2, c3 + 1) + Z(c1 + 1, c2, c3))) : 0.5 * a;
        break;
    }
    default: {
        const double a = Z(c1, c2 + 1, c3 + 1) + Z(c1, c2, c3 + 1) + (Z(c1, c2 + 1, c3) + Z(c1, c2, c3));
        val = mid ? 0.125 * (a + (Z(c1 + 1, c2 + 1, c3 + 1) + Z(c1 + 1, c2, c3 + 1) +
                                  (Z(c1 + 1, c2 + 1, c3) + Z(c1 + 1, c2, c3))))
                  : 0.25 * a;
        break;
    }
    }
    const size_t p = us.at(l1, l2, l3);
    u[p] = u[p] + val;
}

// Sum of squares and max |r| of each row (i2, i3), summed along i1 in order; the host adds the
// rows and planes in order, as ops_host.cpp does, so the norm has the CPU version's bits.
__global__ void k_norm_rows(const double *r, shape s, double *sums, double *maxes) {
    const int i2 = blockIdx.x * blockDim.x + threadIdx.x + 1, i3 = blockIdx.y + 1;
    if (i2 > s.n2) return;
    double sum = 0, mx = 0;
    for (int i1 = 1; i1 <= s.n1; ++i1) {
        const double v = r[s.at(i1, i2, i3)];
        sum += v * v;
        mx = fmax(mx, fabs(v));
    }
    const size_t row = size_t(i3 - 1) * s.n2 + (i2 - 1);
    sums[row] = sum;
    maxes[row] = mx;
}

// Region <-> contiguous buffer (i1 fastest), and region -> region of the same box.
struct reg {
    int lo1, lo2, lo3, len1, len2, len3;
};
reg reg_of(const region &g) {
    return reg{g.lo[0], g.lo[1], g.lo[2], g.hi[0] - g.lo[0] + 1, g.hi[1] - g.lo[1] + 1, g.hi[2] - g.lo[2] + 1};
}
__global__ void k_pack(const double *b, shape s, reg g, double *buf) {
    const size_t t = size_t(blockIdx.x) * blockDim.x + threadIdx.x, n = size_t(g.len1) * g.len2 * g.len3;
    if (t >= n) return;
    const int a = int(t % g.len1), bb = int((t / g.len1) % g.len2), c = int(t / (size_t(g.len1) * g.len2));
    buf[t] = b[s.at(g.lo1 + a, g.lo2 + bb, g.lo3 + c)];
}
__global__ void k_unpack(double *b, shape s, reg g, const double *buf) {
    const size_t t = size_t(blockIdx.x) * blockDim.x + threadIdx.x, n = size_t(g.len1) * g.len2 * g.len3;
    if (t >= n) return;
    const int a = int(t % g.len1), bb = int((t / g.len1) % g.len2), c = int(t / (size_t(g.len1) * g.len2));
    b[s.at(g.lo1 + a, g.lo2 + bb, g.lo3 + c)] = buf[t];
}
__global__ void k_copy(double *b, shape s, reg from, reg to) {
    const size_t t = size_t(blockIdx.x) * blockDim.x + threadIdx.x, n = size_t(from.len1) * from.len2 * from.len3;
    if (t >= n) return;
    const int a = int(t % from.len1), bb = int((t / from.len1) % from.len2), c = int(t / (size_t(from.len1) * from.len2));
    b[s.at(to.lo1 + a, to.lo2 + bb, to.lo3 + c)] = b[s.at(from.lo1 + a, from.lo2 + bb, from.lo3 + c)];
}
unsigned blocks_for(size_t n) { return unsigned((n + 255) / 256); }

class cuda_backend final : public backend {
public:
    cuda_backend(int device, int devices) : device_(device), devices_(devices) {
        CK(cudaSetDevice(device));
        CK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
        CK(cudaEventCreateWithFlags(&done_, cudaEventDisableTiming));
        char bus[32] = "";
        CK(cudaDeviceGetPCIBusId(bus, sizeof bus, device));
        bus_ = bus;
        cudaDeviceProp p{};
        CK(cudaGetDeviceProperties(&p, device));
        name_ = "cuda:" + std::to_string(device) + " " + p.name + " (" + bus_ + ")";
    }
    ~cuda_backend() override {
        cudaFree(norm_);
        cudaEventDestroy(done_);
        cudaStreamDestroy(stream_);
    }
    const char *name() const override { return "cuda"; }
    std::string pci_bus_id() const override { return bus_; }
    std::string device() const override { return name_; }
    bool counts_energy() const override { return hgas_local_rank() < devices_; }

    double *alloc(size_t count) override {
        void *p = nullptr;
        nas::check(hgas_malloc_kind(count * sizeof(double), HGAS_KIND_CUDA, &p),
                   "hgas_malloc_kind (grid; HGAS_CUDA_HEAP_SIZE must hold the grids of every level)");
        return static_cast<double *>(p);
    }
    void release(double *p) override { nas::check(hgas_free(p), "hgas_free"); }
    double *alloc_scratch(size_t count) override {
        void *p = nullptr;
        CK(cudaMalloc(&p, count * sizeof(double)));
        return static_cast<double *>(p);
    }
    void release_scratch(double *p) override { cudaFree(p); }

    void zero(box b) override { CK(cudaMemsetAsync(b.p, 0, b.count() * sizeof(double), stream_)); }

    void resid(box u, box v, box r, const double a[4]) override {
        k_resid<<<grid_for(u.n1, u.n2, u.n3), dim3(kBlock1, kBlock2), 0, stream_>>>(u.p, v.p, r.p, shape_of(u), a[0],
                                                                                    a[2], a[3]);
        LAUNCHED("k_resid");
    }
    void psinv(box r, box u, const double c[4]) override {
        k_psinv<<<grid_for(r.n1, r.n2, r.n3), dim3(kBlock1, kBlock2), 0, stream_>>>(r.p, u.p, shape_of(r), c[0], c[1],
                                                                                    c[2]);
        LAUNCHED("k_psinv");
    }
    void rprj3(box f, box s) override {
        k_rprj3<<<grid_for(s.n1, s.n2, s.n3), dim3(kBlock1, kBlock2), 0, stream_>>>(f.p, shape_of(f), s.p,
                                                                                    shape_of(s));
        LAUNCHED("k_rprj3");
    }
    void interp(box z, box u, const int coff[3]) override {
        k_interp<<<grid_for(u.n1 + 2, u.n2 + 2, u.n3 + 2), dim3(kBlock1, kBlock2), 0, stream_>>>(
            z.p, shape_of(z), u.p, shape_of(u), coff[0], coff[1], coff[2]);
        LAUNCHED("k_interp");
    }
    void norm2(box r, double *sum, double *max) override {
        const size_t rows = size_t(r.n2) * r.n3;
        if (norm_rows_ < rows) {
            cudaFree(norm_);
            CK(cudaMalloc(&norm_, 2 * sizeof(double) * rows));
            norm_rows_ = rows;
        }
        k_norm_rows<<<dim3(unsigned((r.n2 + 127) / 128), unsigned(r.n3)), 128, 0, stream_>>>(r.p, shape_of(r), norm_,
                                                                                          norm_ + rows);
        LAUNCHED("k_norm_rows");
        host_.resize(2 * rows);
        CK(cudaMemcpyAsync(host_.data(), norm_, 2 * sizeof(double) * rows, cudaMemcpyDeviceToHost, stream_));
        sync();
        double s = 0, m = 0;
        for (int i3 = 0; i3 < r.n3; ++i3) {
            double plane = 0;
            for (int i2 = 0; i2 < r.n2; ++i2) plane += host_[size_t(i3) * r.n2 + i2];
            s += plane;
        }
        for (size_t p = 0; p < rows; ++p) m = std::fmax(m, host_[rows + p]);
        *sum = s;
        *max = m;
    }

    void pack(box b, const region &g, double *buf) override {
        k_pack<<<blocks_for(g.count()), 256, 0, stream_>>>(b.p, shape_of(b), reg_of(g), buf);
        LAUNCHED("k_pack");
    }
    void unpack(box b, const region &g, const double *buf) override {
        k_unpack<<<blocks_for(g.count()), 256, 0, stream_>>>(b.p, shape_of(b), reg_of(g), buf);
        LAUNCHED("k_unpack");
    }
    void copy(box b, const region &from, const region &to) override {
        k_copy<<<blocks_for(from.count()), 256, 0, stream_>>>(b.p, shape_of(b), reg_of(from), reg_of(to));
        LAUNCHED("k_copy");
    }
    void upload(double *dst, const double *host, size_t count) override {
        CK(cudaMemcpyAsync(dst, host, count * sizeof(double), cudaMemcpyHostToDevice, stream_));
        sync();  // the host buffer may be reused at once
    }
    void download(double *host, const double *src, size_t count) override {
        CK(cudaMemcpyAsync(host, src, count * sizeof(double), cudaMemcpyDeviceToHost, stream_));
        sync();
    }
    // Waits for the stream with the job's deadline (HGAS_TIMEOUT), yielding the core.
    void sync() override {
        CK(cudaEventRecord(done_, stream_));
        const double deadline = nas::now() + nas::wait_timeout_s();
        for (;;) {
            const cudaError_t q = cudaEventQuery(done_);
            if (q == cudaSuccess) return;
            if (q != cudaErrorNotReady) cuda_fail(q, "cudaEventQuery", __LINE__);
            if (nas::now() > deadline)
                nas::die(std::string(nas::program()) + ": rank " + std::to_string(hgas_rank_me()) +
                         ": the GPU did not finish its kernels within HGAS_TIMEOUT");
            sched_yield();
        }
    }

private:
    int device_, devices_;
    cudaStream_t stream_ = nullptr;
    cudaEvent_t done_ = nullptr;
    std::string bus_, name_;
    double *norm_ = nullptr;
    size_t norm_rows_ = 0;
    std::vector<double> host_;
};

}  // namespace

std::unique_ptr<backend> make_cuda_backend(std::string *why) {
    int n = 0;
    const cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n == 0) {
        *why = std::string("no CUDA device visible (") + (e != cudaSuccess ? cudaGetErrorString(e) : "0 devices") + ")";
        return nullptr;
    }
    // The GPU hgas's cuda heap uses for this rank: local rank modulo the GPUs.
    return std::make_unique<cuda_backend>(hgas_local_rank() % n, n);
}

}  // namespace mg
