// matmul: C = A·B on distributed shared arrays (README.md). What main.cpp, multiply.cpp,
// verify.cpp and the engines share: the options, the tile layout and the inputs.
#pragma once

#include <cstdint>
#include <string>

#include <hgas/hgas.h>

#ifdef __CUDACC__
#define MATMUL_HD __host__ __device__
#else
#define MATMUL_HD
#endif

namespace matmul {

struct options {
    uint64_t n = 1024;       // matrix order
    uint64_t block = 0;      // tile order (0: chosen from n and the kind, options.cpp)
    hgas_kind_t kind = HGAS_KIND_HOST;
    int reps = 3;            // timed multiplies (after one untimed warm-up)
    bool verify = true;      // compare with a one-rank GEMM of the same inputs
    bool inject_error = false;  // tests: spoil one element of C before the check
    int blas_threads = 0;    // OpenBLAS threads per rank (0: the node's cores / its ranks)
    std::string json;        // append one JSON record here
    bool quiet = false;
};

// Parses argv; on bad input prints what is wrong and the usage (rank 0 only) and returns
// false. *exit_code is 0 for --help, 2 for an error.
bool parse(int argc, char **argv, options &o, int *exit_code);

// The matrices are nb x nb tiles of block x block doubles, each tile row-major and contiguous:
// tile (I, J) is block I * nb + J of its hgas_array, so it lives on rank (I * nb + J) % P
// (hgas_all_alloc's block-cyclic rule) at local slot (I * nb + J) / P.
enum matrix_id { MAT_A = 1, MAT_B = 2 };

// Element (i, j) of input matrix `id`: a hash of its global position, so that the inputs are
// the same for every rank count and tile order. Values k * 2^-52 - 1 in [-1, 1), exact in a
// double and the same on the CPU and the GPU.
MATMUL_HD inline double input_value(int id, uint64_t n, uint64_t i, uint64_t j) {
    uint64_t z = (static_cast<uint64_t>(id) << 58) ^ (i * n + j);
    z += 0x9e3779b97f4a7c15ull;  // splitmix64's finalizer
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return static_cast<double>(z >> 11) * 0x1p-52 - 1.0;
}

}  // namespace matmul
