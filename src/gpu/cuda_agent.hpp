// The copy agent of the cuda device: a one-block kernel that serves small copies and atomics
// from a ring of descriptors in pinned host memory, so that a small host-initiated operation
// costs one PCIe round trip to fetch it and a posted write to answer, instead of a copy-engine
// submission plus a stream synchronization (about 7-10 us on an H100 or H200).
//
// Protocol (one producer: the device's owner thread, under the device's lock):
//  host:   writes desc[s % ring_slots]'s four 16-byte words, each with ONE 16-byte store
//          (word_store) whose first 4 bytes are the tag (uint32_t)s
//  agent:  one warp reads the four words with one instruction (acquire, system scope): when
//          every word carries the tag, the descriptor is complete -- a 16-byte aligned store
//          of an AVX-capable x86 CPU is single-copy atomic, and a read of one 64-byte line
//          returns whole words, so a word with the new tag has the new payload. One read per
//          poll, where a separate sequence word and header would cost two PCIe round trips.
//          The reads are acquires, so what the host wrote before the descriptor (a payload
//          slot) is seen after the block barrier that follows; a relaxed read and a
//          fence.acq_rel.sys after it cost 0.5 us more per descriptor (H200).
//          Executes, then, after a block barrier, thread 0 writes done = s with one release
//          store (cumulative: the block's copy and the atomic's result first): at system scope,
//          or, where the host marked every store as going to this GPU's own memory
//          (dst_gpu), a GPU-scope fence and a relaxed store (0.31 against 0.55 us, H200): the
//          copy is then in the GPU's L2, which every later reader goes through
//  host:   waits until done >= s; the atomic's old value is in results[s % ring_slots].
// What the PTX memory model does not promise and this relies on, as the hardware does: a
// v4 load returns the 16 bytes of one word together (the model calls it four loads); the
// host, outside .gpu scope, sees a dst_gpu copy once done is written, because MEMBAR.GPU
// returns only when the stores are in L2, in front of every reader of this GPU's memory; and a
// relaxed done = s + 1 is not seen before the system-scope release of an earlier s was.
// Small sources in host memory that the GPU cannot read (pageable), and any host source when
// other processes share the GPU, travel in the ring: the host copies up to inline_max bytes
// into payload[s % ring_slots] before it writes the descriptor, whose source then points there
// (the agent's acquire polls and the block barrier after them order the payload before its
// reads). Up to
// desc_inline_max bytes go in the descriptor itself (op_copy_inline), not in the payload slot.
// Only one warp polls: hgas-gpu-limits flag_poll measured 3.2 us for a round trip with one
// polling warp, 3.9 with two and 9.7 with eight (more reads of the line the host writes slow
// the host's store down).
// The agent exits after `idle_ns` without work (so that cudaDeviceSynchronize in the program
// returns soon after hgas goes quiet), writing exit_seq (the first sequence number it did not
// take) and then alive = 0; the host relaunches it from exit_seq when it finds alive == 0 with
// work outstanding. Launches are on one stream, so two agents never overlap.
#pragma once
#include <cstddef>
#include <cstdint>
#if defined(__x86_64__) && !defined(__CUDACC__)
#include <immintrin.h>
#endif

namespace hgas::gpu::agent {

inline constexpr int ring_slots = 64;
inline constexpr uint32_t inline_max = 2048;  // bytes a descriptor's payload slot holds

inline constexpr uint32_t desc_inline_max = 16;  // bytes a descriptor carries in its words 2-3

// op_copy_inline: the bytes themselves are in words 2 and 3 (their 8-byte fields), so the agent
// writes them without reading host memory again (one PCIe round trip fewer than a payload slot).
enum op : uint32_t { op_copy = 1, op_amo = 2, op_copy_inline = 3 };

// Word 2's `a`: flags of the descriptor.
inline constexpr uint32_t dst_gpu = 1;  // a copy whose destination is this GPU's own memory

struct alignas(16) word {  // one 16-byte store; the tag first
    uint32_t tag;
    uint32_t a;  // word 0: length or width; word 1: op | amo_op << 16; word 2: flags (dst_gpu)
    uint64_t b;  // word 0: dst; word 1: src; word 2: operand; word 3: compare
};

struct alignas(64) desc {
    word w[4];
};
static_assert(sizeof(desc) == 64, "a descriptor is one 64-byte line, read in one go");

struct ring {
    desc d[ring_slots];
    uint64_t results[ring_slots];   // an atomic's old value, by slot; written by the agent
    alignas(64) uint64_t done;      // written by the agent
    alignas(64) uint64_t exit_seq;  // written by the agent as it exits
    alignas(64) uint64_t alive;     // 1 set by the host before a launch, 0 by the agent at exit
    alignas(64) uint64_t stop;      // set by the host: exit now
    alignas(64) unsigned char payload[ring_slots][inline_max];  // sources copied in by the host
};

#if !defined(__CUDACC__)
// The host's store of one word: 16 bytes written by one instruction, so the agent never sees
// the tag of a word without its payload.
inline void word_store(word *dst, const word &v) {
#if defined(__x86_64__)
    // MOVDQA: single-copy atomic on x86-64 processors with AVX (Intel SDM vol. 3A 9.1.1; AMD
    // likewise), the processors CUDA's hosts have.
    _mm_store_si128(reinterpret_cast<__m128i *>(dst), _mm_load_si128(reinterpret_cast<const __m128i *>(&v)));
#elif defined(__aarch64__)
    // STP of two registers to a 16-byte aligned address: single-copy atomic with FEAT_LSE2.
    uint64_t lo, hi;
    static_assert(sizeof v == 16, "a word is 16 bytes");
    __builtin_memcpy(&lo, &v, 8);
    __builtin_memcpy(&hi, reinterpret_cast<const char *>(&v) + 8, 8);
    asm volatile("stp %1, %2, [%0]" ::"r"(dst), "r"(lo), "r"(hi) : "memory");
#else
#error "the copy agent needs a single-copy atomic 16-byte store on this processor"
#endif
}
#endif

}  // namespace hgas::gpu::agent
