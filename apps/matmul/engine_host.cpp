// OpenBLAS on the CPU: kind host (tiles read in place or fetched into host buffers) and kind
// sim (every tile fetched into host buffers, C written back with a put).
#include <cblas.h>

#include <chrono>
#include <thread>

#include "engine.hpp"

extern "C" void openblas_set_num_threads(int);

namespace matmul {
namespace {

class host_engine : public engine {
public:
    std::string init(uint64_t b, int slots, int blas_threads) override {
        b_ = b;
        if (blas_threads <= 0) {
            // the node's cores shared among its ranks, so that P ranks do not run P x cores threads
            int cores = static_cast<int>(std::thread::hardware_concurrency());
            int local = hgas_local_n() > 0 ? hgas_local_n() : 1;
            blas_threads = cores / local > 0 ? cores / local : 1;
        }
        threads_ = blas_threads;
        openblas_set_num_threads(blas_threads);
        try {
            bufs_.assign(static_cast<size_t>(slots) * 3, std::vector<double>(b * b));
        } catch (const std::bad_alloc &) {
            return "no host memory for " + std::to_string(slots * 3) + " staging tiles of order " + std::to_string(b);
        }
        return "";
    }
    bool async() const override { return false; }
    double *buffer(int s, int which) override { return bufs_[static_cast<size_t>(s) * 3 + which].data(); }
    void fill(double *t, int id, uint64_t n, uint64_t I, uint64_t J) override {
        for (uint64_t i = 0; i < b_; ++i)
            for (uint64_t j = 0; j < b_; ++j) t[i * b_ + j] = input_value(id, n, I * b_ + i, J * b_ + j);
    }
    void gemm(const double *a, const double *b, double *c, bool accumulate) override {
        const int m = static_cast<int>(b_);
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, m, m, 1.0, a, m, b, m, accumulate ? 1.0 : 0.0, c, m);
    }
    void mark(int) override {}
    void wait(int) override {}
    void finish() override {}
    double reference(uint64_t n, int reps, std::vector<double> &r, std::string *err) override {
        std::vector<double> a, b;
        try {
            a.resize(n * n);
            b.resize(n * n);
            r.assign(n * n, 0.0);
        } catch (const std::bad_alloc &) {
            *err = "no host memory for the reference (3 matrices of order " + std::to_string(n) + "): use --no-verify";
            return -1;
        }
        for (uint64_t i = 0; i < n; ++i)
            for (uint64_t j = 0; j < n; ++j) {
                a[i * n + j] = input_value(MAT_A, n, i, j);
                b[i * n + j] = input_value(MAT_B, n, i, j);
            }
        // the reference rank runs alone: all the node's cores
        openblas_set_num_threads(static_cast<int>(std::thread::hardware_concurrency()));
        double best = 1e300;
        const int m = static_cast<int>(n);
        for (int k = 0; k < reps; ++k) {
            auto t0 = std::chrono::steady_clock::now();
            cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, m, m, 1.0, a.data(), m, b.data(), m, 0.0, r.data(), m);
            double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            if (t < best) best = t;
        }
        openblas_set_num_threads(threads_);
        return best;
    }
    const char *library() const override { return "openblas"; }

private:
    uint64_t b_ = 0;
    int threads_ = 1;
    std::vector<std::vector<double>> bufs_;
};

}  // namespace

std::unique_ptr<engine> make_host_engine() { return std::make_unique<host_engine>(); }

}  // namespace matmul
