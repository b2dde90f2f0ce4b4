// The one kernel of a team whose members are all rank threads of this process on one GPU
// (cuda_team_group.hpp). Its launcher has made its stream wait until every member's stream has
// reached the call, so every vector is ready, and nothing waits inside the kernel. Each
// element of every output is computed by one thread from the elements it needs, read before
// it writes: an output may be its member's vector (in place) where the collective allows it.
#include <hgas/hgas.h>

#include <algorithm>
#include <cstdint>

#include "gpu/cuda_combine.cuh"
#include "gpu/cuda_team_group.hpp"

namespace hgas::gpu {

namespace {

constexpr int threads = 256;

template <class T>
__device__ __forceinline__ const T *in_of(const device::team_group_args &g, int q) {
    return static_cast<const T *>(g.in[q]);
}
template <class T>
__device__ __forceinline__ T *out_of(const device::team_group_args &g, int q) {
    return static_cast<T *>(g.out[q]);
}

// allreduce, reduce and reduce_scatter: element e of the combined vector (every member's
// element e, in member order, so every output holds the same bits) goes to every output
// (allreduce), to the root's (reduce), or to member e / count's at e % count (reduce_scatter).
template <class T>
__global__ void __launch_bounds__(threads) group_reduce(device::team_group_args g) {
    const size_t stride = static_cast<size_t>(gridDim.x) * threads;
    const bool scatter = g.what == device::team_reduce_scatter_op;
    const size_t total = scatter ? g.count * static_cast<size_t>(g.n) : g.count;
    for (size_t e = static_cast<size_t>(blockIdx.x) * threads + threadIdx.x; e < total; e += stride) {
        T acc = in_of<T>(g, 0)[e];
        for (int q = 1; q < g.n; ++q) acc = combine<T>(acc, in_of<T>(g, q)[e], g.op);
        if (scatter) {
            const size_t p = e / g.count;
            out_of<T>(g, static_cast<int>(p))[e - p * g.count] = acc;
        } else if (g.what == device::team_reduce_op) {
            out_of<T>(g, g.root)[e] = acc;
        } else {
            for (int p = 0; p < g.n; ++p) out_of<T>(g, p)[e] = acc;
        }
    }
}

// broadcast, fcollect and alltoall in words W (1, 4 or 16 bytes; count is in words here).
template <class W>
__global__ void __launch_bounds__(threads) group_move(device::team_group_args g) {
    const size_t stride = static_cast<size_t>(gridDim.x) * threads;
    const size_t first = static_cast<size_t>(blockIdx.x) * threads + threadIdx.x;
    const size_t w = g.count;
    const size_t n = static_cast<size_t>(g.n);
    if (g.what == device::team_broadcast_op) {
        for (size_t o = first; o < w; o += stride) {
            const W v = in_of<W>(g, g.root)[o];
            for (int p = 0; p < g.n; ++p) out_of<W>(g, p)[o] = v;
        }
    } else if (g.what == device::team_fcollect_op) {
        for (size_t o = first; o < w * n; o += stride) {
            const size_t q = o / w;
            const W v = in_of<W>(g, static_cast<int>(q))[o - q * w];
            for (int p = 0; p < g.n; ++p) out_of<W>(g, p)[o] = v;
        }
    } else {  // alltoall (src and dst apart: hgas.h)
        for (size_t x = first; x < w * n * n; x += stride) {
            const size_t pair = x / w, o = x - pair * w;
            const size_t p = pair / n, q = pair % n;  // member q's block p goes to member p's block q
            out_of<W>(g, static_cast<int>(p))[q * w + o] = in_of<W>(g, static_cast<int>(q))[p * w + o];
        }
    }
}

bool is_move(int what) {
    return what == device::team_broadcast_op || what == device::team_fcollect_op || what == device::team_alltoall_op;
}

size_t elem_size(const device::team_group_args &g) {
    size_t es = 0;
    with_dtype(g.type, [&](auto t) {
        es = sizeof(typename decltype(t)::type);
        return cudaSuccess;
    });
    return es;
}

// The widest word that divides every vector's address and the count of bytes (moves).
size_t move_word(const device::team_group_args &g) {
    uintptr_t bits = g.count;
    for (int q = 0; q < g.n; ++q) bits |= reinterpret_cast<uintptr_t>(g.in[q]) | reinterpret_cast<uintptr_t>(g.out[q]);
    return bits % 16 == 0 ? 16 : bits % 4 == 0 ? 4 : 1;
}

// Bytes of member q's vector and output.
size_t in_bytes(const device::team_group_args &g, size_t es) {
    const size_t v = g.count * es, n = static_cast<size_t>(g.n);
    return g.what == device::team_reduce_scatter_op || g.what == device::team_alltoall_op ? v * n : v;
}
size_t out_bytes(const device::team_group_args &g, size_t es) {
    const size_t v = g.count * es, n = static_cast<size_t>(g.n);
    return g.what == device::team_fcollect_op || g.what == device::team_alltoall_op ? v * n : v;
}

bool overlap(const void *a, size_t an, const void *b, size_t bn) {
    const auto x = reinterpret_cast<uintptr_t>(a), y = reinterpret_cast<uintptr_t>(b);
    return an && bn && x < y + bn && y < x + an;
}

}  // namespace

bool team_group_fits(const device::team_group_args &g) {
    if (g.n < 1 || g.n > device::team_group_members || g.count == 0) return false;
    const size_t es = elem_size(g);
    if (!es || g.count > (SIZE_MAX >> 8) / es) return false;
    const size_t ib = in_bytes(g, es), ob = out_bytes(g, es);
    const bool root_only_in = g.what == device::team_broadcast_op, root_only_out = g.what == device::team_reduce_op;
    for (int q = 0; q < g.n; ++q) {
        const bool needs_in = !root_only_in || q == g.root, needs_out = !root_only_out || q == g.root;
        if ((needs_in && !g.in[q]) || (needs_out && !g.out[q])) return false;
        if ((g.in[q] && reinterpret_cast<uintptr_t>(g.in[q]) % es) ||
            (g.out[q] && reinterpret_cast<uintptr_t>(g.out[q]) % es))
            return false;
    }
    for (int p = 0; p < g.n; ++p) {
        if (!g.out[p]) continue;
        const char *o = static_cast<const char *>(g.out[p]);
        for (int q = 0; q < g.n; ++q) {
            if (q != p && g.out[q] && overlap(o, ob, g.out[q], ob)) return false;
            if (!g.in[q] || !overlap(o, ob, g.in[q], ib)) continue;
            // The in-place forms: a member's own vector at its place in its output.
            const char *i = static_cast<const char *>(g.in[q]);
            const size_t v = g.count * es;
            // (Alltoall has none: hgas.h.)
            const bool own = q == p && g.what != device::team_alltoall_op &&
                             (g.what == device::team_fcollect_op         ? i == o + static_cast<size_t>(p) * v
                              : g.what == device::team_reduce_scatter_op ? o == i + static_cast<size_t>(p) * v
                                                                         : i == o);
            if (!own) return false;
        }
    }
    return true;
}

cudaError_t launch_team_group(const device::team_group_args &g, int max_blocks, cudaStream_t s) {
    auto grid = [&](size_t work) {
        const size_t b = (work + threads - 1) / threads;
        return static_cast<unsigned>(
            std::max<size_t>(1, std::min<size_t>(b, static_cast<size_t>(std::max(1, max_blocks)))));
    };
    if (is_move(g.what)) {
        const size_t word = move_word(g), n = static_cast<size_t>(g.n);
        device::team_group_args w = g;
        w.count = g.count / word;
        const size_t work = g.what == device::team_broadcast_op  ? w.count
                            : g.what == device::team_fcollect_op ? w.count * n
                                                                 : w.count * n * n;
        if (word == 16)
            group_move<uint4><<<grid(work), threads, 0, s>>>(w);
        else if (word == 4)
            group_move<uint32_t><<<grid(work), threads, 0, s>>>(w);
        else
            group_move<uint8_t><<<grid(work), threads, 0, s>>>(w);
        return cudaGetLastError();
    }
    const size_t work = g.what == device::team_reduce_scatter_op ? g.count * static_cast<size_t>(g.n) : g.count;
    return with_dtype(g.type, [&](auto t) {
        group_reduce<typename decltype(t)::type><<<grid(work), threads, 0, s>>>(g);
        return cudaGetLastError();
    });
}

cudaError_t preload_team_group_kernels() {
    cudaFuncAttributes at;
    for (const void *f :
         {reinterpret_cast<const void *>(group_move<uint4>), reinterpret_cast<const void *>(group_move<uint32_t>),
          reinterpret_cast<const void *>(group_move<uint8_t>)})
        if (const cudaError_t e = cudaFuncGetAttributes(&at, f); e != cudaSuccess) return e;
    return for_each_dtype([&](auto t) { return cudaFuncGetAttributes(&at, group_reduce<typename decltype(t)::type>); });
}

}  // namespace hgas::gpu
