// Where the tile products run: OpenBLAS on the CPU (kinds host and sim, engine_host.cpp) or
// cuBLAS on the rank's GPU (kind cuda, engine_cuda.cu). The distributed loop (multiply.cpp)
// sees only this interface.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "matmul.hpp"

namespace matmul {

class engine {
public:
    virtual ~engine() = default;
    // Tile order b; the staging buffers of `slots` steps (an A and a B tile each, plus a C
    // tile for kind sim). Returns "" or what went wrong.
    virtual std::string init(uint64_t b, int slots, int blas_threads) = 0;
    // true: gemm() only queues the product (the GPU), so the loop queues it before it waits
    // for the previous one; false: gemm() returns when the product is done.
    virtual bool async() const = 0;
    // Staging tile `which` (0: A, 1: B, 2: C) of slot s, in the memory gemm() reads.
    virtual double *buffer(int s, int which) = 0;
    // Fills a tile of this engine's memory with tile (I, J) of input matrix `id`.
    virtual void fill(double *tile, int id, uint64_t n, uint64_t I, uint64_t J) = 0;
    // c = a·b (accumulate: c += a·b), b x b row-major tiles in this engine's memory.
    virtual void gemm(const double *a, const double *b, double *c, bool accumulate) = 0;
    // mark(s): after the product that reads slot s; wait(s): until it is done.
    virtual void mark(int s) = 0;
    virtual void wait(int s) = 0;
    virtual void finish() = 0;  // everything queued is done
    // The one-rank reference: the full n x n product C = A·B of the same inputs in one library
    // call, run `reps` times; returns the best time in seconds (or < 0 with *err set), C in r.
    virtual double reference(uint64_t n, int reps, std::vector<double> &r, std::string *err) = 0;
    virtual const char *library() const = 0;  // "openblas" or "cublas"
};

std::unique_ptr<engine> make_host_engine();
// nullptr with *why set where this build or this rank has no GPU
std::unique_ptr<engine> make_cuda_engine(std::string *why);

}  // namespace matmul
