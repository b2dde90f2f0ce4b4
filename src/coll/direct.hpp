// The "direct" reductions (direct.cpp): each member combines its part of the result straight
// from the other members' mapped vectors. For teams whose members' heaps are all mapped here.
#pragma once
#include <hgas/hgas.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "coll/coll.hpp"

namespace hgas::coll::detail {

// The smallest host vector (bytes) that auto reduces directly on a team of n members (device
// vectors: any). Measured on the 2-core development machine with hgas-bench-coll, host memory,
// direct against the other algorithms, 3-5 alternating runs: at 2 ranks direct won from 1 KiB
// (1.7 against 2.0 us; 4 KiB 3.3 against 4.4, 256 KiB 66 against 122) and lost below (512 B:
// 1.5 against 1.4); at 4 ranks (2 per core) from 4 KiB (18.5 against 21.3 us; 8 KiB 24 against
// 33; 4 MiB 5.1 against 7.1 ms), and not below (1 KiB: 13.2 against 11.7).
// Teams of more than direct_host_max_members: never for host vectors by auto (each member
// signals every other twice, where doubling sends log2 n messages; not measured beyond 4).
constexpr int direct_host_max_members = 8;
constexpr size_t direct_host_min_bytes(int n) {
    return n > direct_host_max_members ? SIZE_MAX : n == 2 ? size_t{1} << 10 : size_t{4} << 10;
}

// Whether HGAS_COLL_ALLREDUCE asks for the direct algorithm for a reduction of `bytes` of kind
// `k` on `t`: 'direct', or 'auto' for device vectors and host vectors from
// direct_host_min_bytes. It runs where the buffer is symmetric and direct_possible.
bool direct_chosen(const team &t, mem::kind k, size_t bytes);

// Whether auto reduces a vector of `bytes` of kind `k` on `t` by one kernel per member
// (allreduce_kernel): cuda vectors up to HGAS_COLL_KERNEL_MAX (at most 1 MiB; 64 KiB where two
// members share a GPU) on teams of 2 to 8 members whose GPUs do not time-slice between
// processes. Runs where direct can.
bool kernel_chosen(const team &t, mem::kind k, size_t bytes);

// Whether [p, p + bytes) lies in an allocation of one of this rank's symmetric heaps (host,
// cuda, sim), and where (*ref). Quiet: a buffer elsewhere is no error, only not direct's.
bool symmetric_at(core::rank &r, const void *p, size_t bytes, sym_ref &ref);

// Whether segment `seg` of every member of `t` is mapped in this process (host segments for
// the CPU, device segments for this rank's device), so that the direct algorithms can read it.
bool direct_possible(const team &t, uint16_t seg);

// Allreduce of `count` elements into `d` (symmetric at `dref`, kind `kd`). With `sref`, this
// rank's vector is `s` (symmetric at *sref, in dst's segment, apart from dst); without, it is
// in `d` already (the caller copied it there, or src is dst). `fp`: the fingerprint.
status allreduce_direct(team &t, const char *name, char *d, const char *s, mem::kind kd, const sym_ref &dref,
                        const sym_ref *sref, size_t count, hgas_dtype_t type, hgas_op_t op, uint32_t fp);

// As allreduce_direct, by one kernel per member (gpu::device::team_allreduce).
status allreduce_kernel(team &t, const char *name, char *d, const char *s, mem::kind kd, const sym_ref &dref,
                        const sym_ref *sref, size_t count, hgas_dtype_t type, hgas_op_t op, uint32_t fp);

// The stream-ordered allreduce as one kernel launched on the user's `stream` (a cudaStream_t)
// where the blocking call would run allreduce_kernel: true when launched (the stream then
// carries the whole collective: no host step), false where the call must take the queue of
// stream-ordered collectives (stream.hpp) instead. Argument errors are left to that path.
// The team's members must run its stream-ordered collectives in one order (one stream each,
// or streams ordered by events), as NCCL asks of a communicator.
result<bool> allreduce_kernel_on_stream(team &t, const char *name, void *dst, const void *src, size_t count,
                                        hgas_dtype_t type, hgas_op_t op, void *stream);
// The same for broadcast (the root's src copied into its dst first unless it is symmetric and
// apart) and fcollect (each member's src copied into its block of dst first, likewise).
result<bool> broadcast_kernel_on_stream(team &t, void *dst, const void *src, size_t bytes, int root, void *stream);
result<bool> fcollect_kernel_on_stream(team &t, void *dst, const void *src, size_t bytes, void *stream);
// And alltoall (`bytes` per block) and reduce_scatter (`count` elements per block): a private
// src, all n blocks, is copied into the team's staging block in the cuda heap first; the first
// 8 team slots have one, the other teams take the queue.
result<bool> reduce_scatter_kernel_on_stream(team &t, void *dst, const void *src, size_t count, hgas_dtype_t type,
                                             hgas_op_t op, void *stream);
result<bool> alltoall_kernel_on_stream(team &t, void *dst, const void *src, size_t bytes, void *stream);
// The stream-ordered alltoall's check that src and dst do not overlap (every path refuses it),
// made at the call: an error, with its message, where they do.
status alltoall_overlap(const team &t, const char *name, const void *dst, const void *src, size_t bytes);

// A stream-ordered collective (`what`: gpu::device::team_op or team_group_op; count in elements
// of `type`, or bytes for the copies) of a team whose members are all rank threads of this
// process: the members meet on the host at the call, and where all are on one GPU with device
// vectors one kernel runs it for all, every stream waiting only for work issued before its
// wait (gpu::device::team_group_call; docs/threads.md says why). True when run; false where
// every member takes the other paths (per-member kernels, the queue). The call returns once
// every member has called (or fails after HGAS_TIMEOUT naming those that did not).
// `prior`: an error of this member's call before it came here (its message `prior_msg`): it
// meets all the same and then returns that error, as with its own bad arguments.
result<bool> group_on_stream(team &t, const char *name, int what, void *dst, const void *src, size_t count,
                             hgas_dtype_t type, hgas_op_t op, int root, void *stream, status prior = status::ok,
                             const std::string &prior_msg = std::string());
// Whether group_on_stream meets `t`'s members: all are rank threads of this process, and few
// enough for one kernel.
bool in_process_group(const team &t);
// A stream-ordered kernel collective of this rank that timed out, for hgas_stream_sync.
status kernel_stream_status(core::rank &r);

// Reduce-scatter: dst (`count` elements, kind `kd`) gets block me of the reduction of every
// member's `s` (n blocks, symmetric at `sref`, kind `kd`).
status reduce_scatter_direct(team &t, const char *name, char *d, const char *s, mem::kind kd, const sym_ref &sref,
                             size_t count, hgas_dtype_t type, hgas_op_t op, uint32_t fp);

}  // namespace hgas::coll::detail
