// Kernels of the cuda device: an atomic on device memory executed by one thread, so that
// host-initiated atomics on GPU memory (own, or a peer's mapped through IPC) are true device
// atomics that concur correctly with kernels updating the same word.
#include <cstdint>

#include <hgas/hgas_device.cuh>

#include "gpu/cuda_agent.hpp"
#include "gpu/cuda_kernels.hpp"

namespace hgas::gpu {

namespace {

__device__ __forceinline__ uint64_t load_acquire_sys(const uint64_t *p) {
    uint64_t v;
    asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}
__device__ __forceinline__ void store_release_sys(uint64_t *p, uint64_t v) {
    asm volatile("st.release.sys.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
__device__ __forceinline__ uint4 load_acquire16(const uint4 *p) {
    uint4 v;
    asm volatile("ld.acquire.sys.global.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p)
                 : "memory");
    return v;
}
// done = v for readers that reach the value only through this GPU's memory: a GPU-scope fence
// orders the block's stores (in the GPU's L2 once it returns) before a plain system store.
__device__ __forceinline__ void store_release_gpu_then_sys(uint64_t *p, uint64_t v) {
    asm volatile("fence.acq_rel.gpu;" ::: "memory");
    asm volatile("st.relaxed.sys.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
__device__ __forceinline__ uint64_t global_ns() {
    uint64_t t;
    asm volatile("mov.u64 %0, %globaltimer;" : "=l"(t));
    return t;
}

template <class T>
__device__ T amo_dev(T *p, int op, T v, T cmp) {
    switch (static_cast<amo_op>(op)) {
    case amo_op::fetch: return atomicAdd(p, T(0));
    case amo_op::set: atomicExch(p, v); return 0;
    case amo_op::add:
    case amo_op::fetch_add: return atomicAdd(p, v);
    case amo_op::swap: return atomicExch(p, v);
    case amo_op::compare_swap: return atomicCAS(p, cmp, v);
    case amo_op::and_:
    case amo_op::fetch_and: return atomicAnd(p, v);
    case amo_op::or_:
    case amo_op::fetch_or: return atomicOr(p, v);
    case amo_op::xor_:
    case amo_op::fetch_xor: return atomicXor(p, v);
    }
    return 0;
}

__global__ void amo_kernel(void *p, int op, unsigned width, unsigned long long v, unsigned long long cmp,
                           unsigned long long *result) {
    unsigned long long old;
    if (width == 4)
        old = amo_dev<unsigned int>(static_cast<unsigned int *>(p), op, static_cast<unsigned int>(v),
                                    static_cast<unsigned int>(cmp));
    else
        old = amo_dev<unsigned long long>(static_cast<unsigned long long *>(p), op, v, cmp);
    *result = old;  // pinned host memory: read by the host after the stream synchronizes
    __threadfence_system();
}

template <class T>
__device__ T amo_sys(T *p, int op, T v, T cmp) {
    switch (static_cast<amo_op>(op)) {
    case amo_op::fetch: return atomicAdd_system(p, T(0));
    case amo_op::set: atomicExch_system(p, v); return 0;
    case amo_op::add:
    case amo_op::fetch_add: return atomicAdd_system(p, v);
    case amo_op::swap: return atomicExch_system(p, v);
    case amo_op::compare_swap: return atomicCAS_system(p, cmp, v);
    case amo_op::and_:
    case amo_op::fetch_and: return atomicAnd_system(p, v);
    case amo_op::or_:
    case amo_op::fetch_or: return atomicOr_system(p, v);
    case amo_op::xor_:
    case amo_op::fetch_xor: return atomicXor_system(p, v);
    }
    return 0;
}

__global__ void agent_kernel(agent::ring *ring, uint64_t next, uint64_t idle_ns) {
    __shared__ agent::word hdr[4];
    __shared__ int go;
    uint64_t last = global_ns();
    for (;;) {
        const unsigned slot = static_cast<unsigned>(next % agent::ring_slots);
        if (threadIdx.x < 32) {  // warp 0 polls: lanes 0-3 read the descriptor's four words at once
            const unsigned lane = threadIdx.x;
            const uint4 *words = reinterpret_cast<const uint4 *>(&ring->d[slot]);
            int g = 0;
            bool last_look = false;
            for (unsigned polls = 1;; ++polls) {
                uint4 v = make_uint4(0, 0, 0, 0);
                // Acquires: what the host wrote before the descriptor (a payload slot) is seen
                // by the whole block after the barrier below.
                if (lane < 4) v = load_acquire16(words + lane);
                if (__all_sync(~0u, lane >= 4 || v.x == static_cast<uint32_t>(next))) {
                    if (lane < 4) reinterpret_cast<uint4 *>(hdr)[lane] = v;
                    g = 1;
                    break;
                }
                // Idle for a while (about 1,000 polls, some microseconds): poll less often. A
                // warp reading host memory back to back slowed the copy engines' copies within
                // the GPU by a fifth (H100, 2 MiB cudaMemcpyAsync while the agent waited).
                if (last_look) break;
                if (polls > 1024) __nanosleep(256);
                // The stop word and the clock only now and then: one PCIe read per poll.
                if ((polls & 255) == 0) {
                    int quit = 0;
                    if (lane == 0) quit = load_acquire_sys(&ring->stop) || global_ns() - last > idle_ns;
                    if (__shfl_sync(~0u, quit, 0)) {
                        // One more look at the slot before exiting. The host sets the stop word
                        // only after the posts made before it (agent_gate), so a reader that has
                        // acquired the stop word sees them: a descriptor posted after this poll's
                        // read and before the stop is served, not left to the next relaunch.
                        if (lane < 4) (void)load_acquire_sys(&ring->stop);
                        last_look = true;
                    }
                }
            }
            if (lane == 0) go = g;
        }
        __syncthreads();
        if (!go) break;
        const uint32_t op = hdr[1].a & 0xffffu, aop = hdr[1].a >> 16;
        if (op == agent::op_copy_inline) {
            // Up to 16 bytes from words 2 and 3, one byte per thread (dst may be unaligned).
            const unsigned t = threadIdx.x;
            if (t < hdr[0].a) {
                const uint64_t w = t < 8 ? hdr[2].b : hdr[3].b;
                reinterpret_cast<unsigned char *>(hdr[0].b)[t] = static_cast<unsigned char>(w >> (8 * (t & 7)));
            }
        } else if (op == agent::op_copy) {
            // The device API's block copy: widest words the ends' alignment allows, four loads in
            // flight per thread (a host or peer end is a round trip away), fresh loads (__ldcv:
            // the agent lives long, and host or copy-engine writes since its last read must show).
            hgas::device::detail::group_copy<hgas::device::scope::block, true>(
                reinterpret_cast<void *>(hdr[0].b), reinterpret_cast<const void *>(hdr[1].b), hdr[0].a);
        } else if (threadIdx.x == 0) {
            unsigned long long old;
            if (hdr[0].a == 4)
                old = amo_sys<unsigned int>(reinterpret_cast<unsigned int *>(hdr[0].b), static_cast<int>(aop),
                                            static_cast<unsigned int>(hdr[2].b), static_cast<unsigned int>(hdr[3].b));
            else
                old = amo_sys<unsigned long long>(reinterpret_cast<unsigned long long *>(hdr[0].b), static_cast<int>(aop),
                                                  hdr[2].b, hdr[3].b);
            ring->results[slot] = old;
        }
        __syncthreads();
        // The block's copy (to GPU, peer or host memory) and the result before `done`: the
        // barrier orders the other threads' stores before thread 0's release, which is
        // cumulative -- at system scope one MEMBAR.SYS, where a sequentially consistent
        // __threadfence_system() before a plain store costs more; at GPU scope where every
        // store went to this GPU's memory (an atomic's result goes to host memory).
        if (threadIdx.x == 0) {
            if (op != agent::op_amo && (hdr[2].a & agent::dst_gpu))
                store_release_gpu_then_sys(&ring->done, next);
            else
                store_release_sys(&ring->done, next);
        }
        ++next;
        last = global_ns();
    }
    if (threadIdx.x == 0) {
        store_release_sys(&ring->exit_seq, next);
        store_release_sys(&ring->alive, 0);
    }
}

// A grid-wide copy by SMs: faster than the copy engines for mid-size peer copies.
__global__ void sm_copy_kernel(unsigned char *dst, const unsigned char *src, size_t n) {
    const size_t tid = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
    const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
    if (((reinterpret_cast<uintptr_t>(dst) | reinterpret_cast<uintptr_t>(src)) & 15) == 0) {
        const size_t nv = n / 16;
        const uint4 *s = reinterpret_cast<const uint4 *>(src);
        uint4 *d = reinterpret_cast<uint4 *>(dst);
        size_t i = tid;
        for (; i + 3 * stride < nv; i += 4 * stride) {  // four loads in flight per thread
            uint4 a = s[i], b = s[i + stride], c = s[i + 2 * stride], e = s[i + 3 * stride];
            d[i] = a;
            d[i + stride] = b;
            d[i + 2 * stride] = c;
            d[i + 3 * stride] = e;
        }
        for (; i < nv; i += stride) d[i] = s[i];
        for (size_t j = nv * 16 + tid; j < n; j += stride) dst[j] = src[j];
    } else {
        for (size_t j = tid; j < n; j += stride) dst[j] = src[j];
    }
}

}  // namespace

// Strided layouts: every block has the same length, so the work is `units` words of `W` bytes
// (W: the widest size that divides the base, strides, block and both pointers), one per thread,
// consecutive threads on consecutive words of a block: loads and stores coalesce even for
// blocks of a few bytes (a halo face of single floats), where a block per CTA would idle.
template <class W>
__global__ void gather_strided_kernel(char *packed, char *buf, uint64_t base, uint64_t n0, uint64_t n1, uint64_t s0,
                                      uint64_t s1, uint64_t s2, uint64_t block, uint64_t units, bool unpack) {
    const uint64_t per = block / sizeof(W);
    for (uint64_t u = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; u < units; u += uint64_t(gridDim.x) * blockDim.x) {
        const uint64_t b = u / per, w = u - b * per;
        const uint64_t i0 = b % n0, r = b / n0, i1 = r % n1, i2 = r / n1;
        W *bp = reinterpret_cast<W *>(buf + base + i2 * s2 + i1 * s1 + i0 * s0) + w;
        W *pp = reinterpret_cast<W *>(packed + b * block) + w;
        if (unpack) *bp = *pp;
        else *pp = *bp;
    }
}
// Indexed layouts: one warp per block, bytes (lengths and offsets are arbitrary).
__global__ void gather_indexed_kernel(char *packed, char *buf, const uint64_t *table, uint64_t count, bool unpack) {
    const uint64_t warps = (uint64_t(gridDim.x) * blockDim.x) / 32;
    const unsigned lane = threadIdx.x % 32;
    for (uint64_t b = (blockIdx.x * uint64_t(blockDim.x) + threadIdx.x) / 32; b < count; b += warps) {
        const uint64_t bo = table[3 * b], po = table[3 * b + 1], len = table[3 * b + 2];
        for (uint64_t i = lane; i < len; i += 32) {
            if (unpack) buf[bo + i] = packed[po + i];
            else packed[po + i] = buf[bo + i];
        }
    }
}

cudaError_t launch_gather(char *packed, char *buf, uint64_t base, const uint64_t n[3], const uint64_t s[3],
                          uint64_t block, const uint64_t *table, uint64_t count, bool unpack, int sms,
                          cudaStream_t st) {
    const unsigned threads = 256;
    if (table) {
        const uint64_t want = (count * 32 + threads - 1) / threads;
        const unsigned grid = static_cast<unsigned>(want < uint64_t(4 * sms) ? (want ? want : 1) : 4 * sms);
        gather_indexed_kernel<<<grid, threads, 0, st>>>(packed, buf, table, count, unpack);
        return cudaGetLastError();
    }
    const uint64_t nb = n[0] * n[1] * n[2];
    const uint64_t align = base | s[0] | s[1] | s[2] | block | reinterpret_cast<uintptr_t>(packed) |
                           reinterpret_cast<uintptr_t>(buf);
    const unsigned w = align % 16 == 0 ? 16 : align % 8 == 0 ? 8 : align % 4 == 0 ? 4 : 1;
    const uint64_t units = nb * (block / w);
    const uint64_t want = (units + threads - 1) / threads;
    const unsigned grid = static_cast<unsigned>(want < uint64_t(8 * sms) ? (want ? want : 1) : 8 * sms);
    switch (w) {
    case 16: gather_strided_kernel<uint4><<<grid, threads, 0, st>>>(packed, buf, base, n[0], n[1], s[0], s[1], s[2], block, units, unpack); break;
    case 8: gather_strided_kernel<uint2><<<grid, threads, 0, st>>>(packed, buf, base, n[0], n[1], s[0], s[1], s[2], block, units, unpack); break;
    case 4: gather_strided_kernel<unsigned><<<grid, threads, 0, st>>>(packed, buf, base, n[0], n[1], s[0], s[1], s[2], block, units, unpack); break;
    default: gather_strided_kernel<unsigned char><<<grid, threads, 0, st>>>(packed, buf, base, n[0], n[1], s[0], s[1], s[2], block, units, unpack); break;
    }
    return cudaGetLastError();
}

cudaError_t preload_kernels() {
    cudaFuncAttributes a{};
    cudaError_t e = cudaFuncGetAttributes(&a, agent_kernel);
    if (e == cudaSuccess) e = cudaFuncGetAttributes(&a, sm_copy_kernel);
    if (e == cudaSuccess) e = cudaFuncGetAttributes(&a, gather_strided_kernel<uint4>);
    if (e == cudaSuccess) e = cudaFuncGetAttributes(&a, gather_strided_kernel<uint2>);
    if (e == cudaSuccess) e = cudaFuncGetAttributes(&a, gather_strided_kernel<unsigned>);
    if (e == cudaSuccess) e = cudaFuncGetAttributes(&a, gather_strided_kernel<unsigned char>);
    if (e == cudaSuccess) e = cudaFuncGetAttributes(&a, gather_indexed_kernel);
    if (e == cudaSuccess) e = cudaFuncGetAttributes(&a, amo_kernel);
    return e;
}

cudaError_t launch_agent(agent::ring *ring, uint64_t next, uint64_t idle_ns, cudaStream_t s) {
    agent_kernel<<<1, 256, 0, s>>>(ring, next, idle_ns);
    return cudaGetLastError();
}

cudaError_t launch_sm_copy(void *dst, const void *src, size_t n, int blocks, cudaStream_t s) {
    sm_copy_kernel<<<blocks, 512, 0, s>>>(static_cast<unsigned char *>(dst), static_cast<const unsigned char *>(src), n);
    return cudaGetLastError();
}

cudaError_t launch_amo(void *p, amo_op op, unsigned width, uint64_t operand, uint64_t compare, uint64_t *result,
                       cudaStream_t s) {
    amo_kernel<<<1, 1, 0, s>>>(p, static_cast<int>(op), width, operand, compare,
                               reinterpret_cast<unsigned long long *>(result));
    return cudaGetLastError();
}

}  // namespace hgas::gpu
