// The copy agent of the cuda device: a one-block kernel that serves small copies and atomics
// from a ring of descriptors in pinned host memory, so that a small host-initiated operation
// costs a few PCIe round trips instead of a kernel launch or a copy-engine submission plus a
// stream synchronization (about 7-10 us on an H200).
//
// Protocol (one producer: the device's owner thread, under the device's lock):
//  host:   fills desc[s % ring_slots] (all fields, then `seq` = s with release)
//  agent:  sees seq == s (acquire, system scope), executes, writes results, then done = s
//          (release, system scope, after a system fence so peer stores are visible first)
//  host:   waits until done >= s.
// The agent exits after `idle_ns` without work (so that cudaDeviceSynchronize in the program
// returns soon after hgas goes quiet), writing exit_seq (the first sequence number it did not
// take) and then alive = 0; the host relaunches it from exit_seq when it finds alive == 0 with
// work outstanding. Launches are on one stream, so two agents never overlap.
#pragma once
#include <cstddef>
#include <cstdint>

namespace hgas::gpu::agent {

inline constexpr int ring_slots = 64;
inline constexpr int inline_bytes = 192;  // payloads up to this size travel inside the descriptor

enum op : uint32_t { op_copy = 1, op_amo = 2 };

struct desc {  // the first 64 bytes are the header the agent reads in one go
    uint64_t seq;
    uint32_t op;
    uint32_t len;
    uint64_t dst;  // 0: into `data` (the host copies it out)
    uint64_t src;  // 0: from `data`
    uint64_t operand, compare;
    uint32_t amo_op, width;
    uint64_t result;
    unsigned char data[inline_bytes];
};
static_assert(sizeof(desc) == 256, "one descriptor is 256 bytes");
static_assert(offsetof(desc, data) == 64, "the header is 64 bytes");

struct ring {
    desc d[ring_slots];
    alignas(64) uint64_t done;      // written by the agent
    alignas(64) uint64_t exit_seq;  // written by the agent as it exits
    alignas(64) uint64_t alive;     // 1 set by the host before a launch, 0 by the agent at exit
    alignas(64) uint64_t stop;      // set by the host: exit now
};

}  // namespace hgas::gpu::agent
