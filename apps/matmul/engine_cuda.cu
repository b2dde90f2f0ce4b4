// cuBLAS on the rank's GPU (kind cuda): tiles read in place from hgas's symmetric cuda heap or
// fetched by hgas gets into device staging buffers; products queued on one stream, an event
// per slot telling the loop when a staging buffer may be refilled.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdio>

#include "engine.hpp"

namespace matmul {
namespace {

#define CK(call) ck((call), #call, __FILE__, __LINE__)
void ck(cudaError_t e, const char *what, const char *file, int line) {
    if (e != cudaSuccess) {
        char m[400];
        std::snprintf(m, sizeof m, "matmul: %s failed at %s:%d: %s", what, file, line, cudaGetErrorString(e));
        hgas_abort(1, m);
    }
}
#define CB(call) cb((call), #call, __FILE__, __LINE__)
void cb(cublasStatus_t e, const char *what, const char *file, int line) {
    if (e != CUBLAS_STATUS_SUCCESS) {
        char m[400];
        std::snprintf(m, sizeof m, "matmul: %s failed at %s:%d: cuBLAS status %d", what, file, line, static_cast<int>(e));
        hgas_abort(1, m);
    }
}

// a tile (or a whole matrix: b = n, I = J = 0) of input `id`
__global__ void k_fill(double *t, int id, uint64_t n, uint64_t b, uint64_t i0, uint64_t j0) {
    const uint64_t j = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x, i = blockIdx.y;
    if (j < b) t[i * b + j] = input_value(id, n, i0 + i, j0 + j);
}

void fill_rows(double *t, int id, uint64_t n, uint64_t b, uint64_t i0, uint64_t j0, cudaStream_t q) {
    // blockIdx.y is at most 65535 rows per launch
    for (uint64_t r = 0; r < b; r += 65535) {
        const unsigned rows = static_cast<unsigned>(b - r < 65535 ? b - r : 65535);
        dim3 grid(static_cast<unsigned>((b + 255) / 256), rows);
        k_fill<<<grid, 256, 0, q>>>(t + r * b, id, n, b, i0 + r, j0);
    }
    CK(cudaGetLastError());
}

// Row-major C = A·B is column-major C^T = B^T·A^T: the same call with A and B swapped.
void dgemm_rm(cublasHandle_t h, uint64_t m, const double *a, const double *b, double *c, double beta) {
    const double one = 1.0;
    const int k = static_cast<int>(m);
    CB(cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, k, k, k, &one, b, k, a, k, &beta, c, k));
}

class cuda_engine : public engine {
public:
    ~cuda_engine() override {
        for (double *p : bufs_) cudaFree(p);
        for (cudaEvent_t e : events_) cudaEventDestroy(e);
        if (blas_) cublasDestroy(blas_);
        if (q_) cudaStreamDestroy(q_);
    }
    std::string init(uint64_t b, int slots, int) override {
        b_ = b;
        int ngpu = 0;
        if (cudaGetDeviceCount(&ngpu) != cudaSuccess || ngpu == 0) return "--kind cuda: no GPU visible to this rank";
        if (!hgas_kind_available(HGAS_KIND_CUDA)) return "--kind cuda: hgas has no cuda memory (HGAS_CUDA_HEAP_SIZE 0?)";
        CK(cudaStreamCreateWithFlags(&q_, cudaStreamNonBlocking));
        CB(cublasCreate(&blas_));
        CB(cublasSetStream(blas_, q_));
        for (int s = 0; s < slots; ++s) {
            for (int w = 0; w < 2; ++w) {
                double *p = nullptr;
                if (cudaMalloc(&p, b * b * sizeof(double)) != cudaSuccess)
                    return "--kind cuda: no GPU memory for the staging tiles (" + std::to_string(2 * slots) +
                           " of " + std::to_string(b * b * 8 >> 20) + " MiB): use a smaller --block";
                bufs_.push_back(p);
            }
            cudaEvent_t e;
            CK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
            events_.push_back(e);
        }
        return "";
    }
    bool async() const override { return true; }
    double *buffer(int s, int which) override { return which < 2 ? bufs_[static_cast<size_t>(s) * 2 + which] : nullptr; }
    void fill(double *t, int id, uint64_t n, uint64_t I, uint64_t J) override {
        fill_rows(t, id, n, b_, I * b_, J * b_, q_);
        CK(cudaStreamSynchronize(q_));
    }
    void gemm(const double *a, const double *b, double *c, bool accumulate) override {
        dgemm_rm(blas_, b_, a, b, c, accumulate ? 1.0 : 0.0);
    }
    void mark(int s) override { CK(cudaEventRecord(events_[s], q_)); }
    void wait(int s) override { CK(cudaEventSynchronize(events_[s])); }
    void finish() override { CK(cudaStreamSynchronize(q_)); }
    double reference(uint64_t n, int reps, std::vector<double> &r, std::string *err) override {
        double *a = nullptr, *b = nullptr, *c = nullptr;
        const size_t bytes = n * n * sizeof(double);
        if (cudaMalloc(&a, bytes) != cudaSuccess || cudaMalloc(&b, bytes) != cudaSuccess || cudaMalloc(&c, bytes) != cudaSuccess) {
            cudaFree(a);
            cudaFree(b);
            *err = "no GPU memory for the single-GPU cuBLAS reference (3 matrices of " + std::to_string(bytes >> 20) +
                   " MiB): use --no-verify";
            return -1;
        }
        fill_rows(a, MAT_A, n, n, 0, 0, q_);
        fill_rows(b, MAT_B, n, n, 0, 0, q_);
        cudaEvent_t t0, t1;
        CK(cudaEventCreate(&t0));
        CK(cudaEventCreate(&t1));
        dgemm_rm(blas_, n, a, b, c, 0.0);  // warm-up (cuBLAS picks and loads its kernel)
        float best = 1e30f;
        for (int k = 0; k < reps; ++k) {
            CK(cudaEventRecord(t0, q_));
            dgemm_rm(blas_, n, a, b, c, 0.0);
            CK(cudaEventRecord(t1, q_));
            CK(cudaEventSynchronize(t1));
            float ms = 0;
            CK(cudaEventElapsedTime(&ms, t0, t1));
            if (ms < best) best = ms;
        }
        r.resize(n * n);
        CK(cudaMemcpy(r.data(), c, bytes, cudaMemcpyDeviceToHost));
        cudaEventDestroy(t0);
        cudaEventDestroy(t1);
        cudaFree(a);
        cudaFree(b);
        cudaFree(c);
        return best * 1e-3;
    }
    const char *library() const override { return "cublas"; }

private:
    uint64_t b_ = 0;
    cudaStream_t q_ = nullptr;
    cublasHandle_t blas_ = nullptr;
    std::vector<double *> bufs_;
    std::vector<cudaEvent_t> events_;
};

}  // namespace

std::unique_ptr<engine> make_cuda_engine(std::string *) { return std::make_unique<cuda_engine>(); }

}  // namespace matmul
