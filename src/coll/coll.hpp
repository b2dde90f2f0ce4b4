// Collectives on a team (team.hpp; the world team by default): broadcast, reduce, allreduce,
// reduce_scatter, fcollect (allgather), collect (varying sizes), alltoall, alltoallv.
// Algorithms, signal words and the life of one broadcast: src/coll/README.md.
//
// Every call is collective: all ranks call it in the same order with matching arguments
// (sizes, types, ops, root). Each returns status::ok or a failure decided before any byte
// moved (bad arguments), or a timeout / peer failure from a wait. Calls are back-to-back
// safe: no barrier is needed between two collectives, whatever their kinds.
// Thread safety: as the rest of a rank's calls (serialized).
#pragma once
#include <hgas/hgas.h>

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>

#include "coll/team.hpp"
#include "core/rank.hpp"

namespace hgas::coll {

/// Copies `bytes` from `src` on `root` into `dst` on every rank (the root included).
/// `dst` must lie in the symmetric heap (same offset everywhere); `src` is any local memory
/// of the root, ignored elsewhere. Binomial tree, pipelined in chunks (64 KiB into host memory,
/// larger into device memory: README.md).
/// Returns when this rank's `dst` holds the data and every byte it forwards has left.
status broadcast(core::rank &r, void *dst, const void *src, size_t bytes, int root);

/// Combines `count` elements of `src` from every rank with `op` into `dst` on `root` (`dst`
/// ignored elsewhere). `src`/`dst` are any local memory and may be the same. Binomial tree
/// through the symmetric scratch, chunked; the combination order is fixed by (n, root).
status reduce(core::rank &r, void *dst, const void *src, size_t count, hgas_dtype_t type, hgas_op_t op, int root);

/// As reduce, with the result on every rank; every rank gets bit-identical results.
status allreduce(core::rank &r, void *dst, const void *src, size_t count, hgas_dtype_t type, hgas_op_t op);

/// Every rank's `bytes` from `src` land at dst + rank * bytes on every rank. `dst` symmetric,
/// n * bytes. One put_signal per peer.
status fcollect(core::rank &r, void *dst, const void *src, size_t bytes);

/// Block j (of `bytes`) of rank i's `src` lands as block i of rank j's `dst`. `dst`
/// symmetric, n * bytes; `src` any local memory, n * bytes, not overlapping `dst`.
status alltoall(core::rank &r, void *dst, const void *src, size_t bytes);

// The same on a team: ranks (root, block order) are team numbers. The overloads above run
// on the world team.
status broadcast(team &t, void *dst, const void *src, size_t bytes, int root);
status reduce(team &t, void *dst, const void *src, size_t count, hgas_dtype_t type, hgas_op_t op, int root);
status allreduce(team &t, void *dst, const void *src, size_t count, hgas_dtype_t type, hgas_op_t op);
status fcollect(team &t, void *dst, const void *src, size_t bytes);
status alltoall(team &t, void *dst, const void *src, size_t bytes);

/// Member i gets elements [i*count, (i+1)*count) of the reduction of every member's `src`
/// (count * n elements) in `dst`. Where every member's symmetric `src` is mapped here, each
/// member combines its block from the others' `src` (direct); else an allreduce of the whole
/// vector into a private buffer, then a copy of this rank's block.
status reduce_scatter(team &t, void *dst, const void *src, size_t count, hgas_dtype_t type, hgas_op_t op);
/// Every member's `bytes` (may differ) land back to back in team order in every member's
/// symmetric `dst`; *total (if not NULL) gets the sum. Sizes, and blocks that fit, travel through
/// slots of the collective scratch (HGAS_COLL_COLLECT); larger blocks go to the peers' dst after.
status collect(team &t, void *dst, const void *src, size_t bytes, size_t *total);
/// send_bytes[j] bytes from src + send_off[j] go to member j at its dst + recv_off[me]. The
/// receivers' (offset, size) pairs travel first through the scratch; sizes must agree.
status alltoallv(team &t, void *dst, const size_t *recv_off, const size_t *recv_bytes, const void *src,
                 const size_t *send_off, const size_t *send_bytes);

/// Size in bytes of one element of `t`, or 0 for a value that is not an hgas_dtype_t.
size_t dtype_size(hgas_dtype_t t);

/// inout[i] = inout[i] op in[i] for i < count. Integer SUM/PROD wrap around (two's
/// complement) for signed types too; float MIN/MAX are `a < b ? a : b` style (NaN operands
/// give an unspecified one of the two). Fails with invalid_arg for an unknown type/op or a
/// NULL pointer with count > 0.
status reduce_local(void *inout, const void *in, size_t count, hgas_dtype_t type, hgas_op_t op);

namespace detail {

// Signal words of the collectives, as indices into a team's block of internal().coll_flags
// (coll_team_words words, 64 bytes apart; session snapshots and bit() cover words below 64
// only). README.md explains the protocol; in short: every word only grows, and a rank reads
// the words it will wait on at entry, before it announces (w_entered) that peers may write
// to it for this collective.
enum word : int {
    w_entered = 0,   // written by the owner only: number of collectives it has entered
    w_bcast = 1,     // broadcast: chunks received from the tree parent
    w_fcollect = 2,  // fcollect: blocks received
    w_alltoall = 3,  // alltoall: blocks received
    w_collect = 4,   // collect: blocks received
    w_alltoallv = 5, // alltoallv: (offset, size) pairs received, then blocks received
    w_vdata = 6,     // alltoallv: blocks received
    w_vec_off = 7,   // written by the owner only, before entry: the offset of its direct
                     // allreduce's dst in its segment
    w_history = 8,   // written by the owner only: w_history + (epoch % history_len) holds its
    history_len = 8, // w_entered value of that collective (see wait_entered)
    w_data = 16,     // reduce/allreduce: w_data + s counts chunks that arrived in scratch slot s
    w_credit = 40,   // reduce/allreduce: w_credit + s counts chunks the receiver of my slot-s
                     // channel has consumed (so the next may overwrite it)
    max_slots = 24,
    w_barrier = 64,  // team barrier: w_barrier + k counts round-k arrivals (32 rounds)
    w_src_off = 96,  // written by the owner only, before entry: where the vector that its direct
                     // allreduce / reduce_scatter reads lies in its segment (its src, or its dst)
};

// What a rank announces in its w_entered word: (epoch << 24) | a 24-bit fingerprint of the
// collective and its arguments (which call, root, sizes, type, op). A peer that is about to
// write for this collective, or waits for data from this rank, compares the fingerprint with
// its own: a mismatch (ranks that passed different roots or sizes, or called different
// collectives) fails at once with a message instead of a hang or a wrong result.
constexpr unsigned desc_bits = 24;
constexpr uint32_t desc_mask = (1u << desc_bits) - 1;
// The fingerprint of a rank that found one of its own arguments bad: it enters the collective
// only to tell the ranks that read its word (they fail too), and returns its error.
constexpr uint32_t desc_failed = desc_mask;
enum call_id : uint64_t {
    c_broadcast = 1, c_reduce, c_allreduce, c_fcollect, c_alltoall, c_collect, c_alltoallv, c_reduce_scatter
};
uint32_t fingerprint(uint64_t call, uint64_t a, uint64_t b = 0, uint64_t c = 0);
constexpr uint64_t bit(int w) { return uint64_t{1} << w; }
// The data and credit words of channel slots 0 .. nslots - 1 (reduce, allreduce).
constexpr uint64_t slot_words(int nslots) {
    return ((bit(nslots) - 1) << w_data) | ((bit(nslots) - 1) << w_credit);
}

// One collective in progress on this rank: its epoch and the values of the signal words at
// entry (nothing writes to them for this collective until w_entered says so).
struct session {
    team &t;
    core::rank &r;
    uint64_t epoch = 0;
    uint32_t desc = 0;
    // This rank's arguments in words, for messages: a printf format of up to four %llu and
    // their values, formatted only when a message needs them (describe_args).
    const char *args = "";
    unsigned long long av[4] = {};
    uint64_t base[64] = {};

    // Snapshots the words in `words` (bit w: word w; the collective waits on no other) and
    // announces the entry. Fewer words, fewer loads on the small-message path.
    session(team &tm, uint32_t fingerprint, const char *args_fmt, uint64_t words,
            std::initializer_list<uint64_t> values = {});
    std::string describe_args() const;
    uint64_t *word(int w) const;
    uint64_t load(int w) const;
    // Global pointer to word `w` on team member `peer`.
    hgas_gptr_t peer_word(int peer, int w) const;
    // Waits until `peer` has entered this collective, so its signal words, dst and scratch
    // are ours to write for it. Fails (invalid_arg, naming the peer) if the peer entered it
    // with other arguments or failed its own checks (a peer already past it is compared from
    // its history, if it is fewer than history_len collectives ahead). `*agrees` (if given)
    // is set when the peer is in this collective with our arguments.
    status wait_entered(int peer, const char *what, bool *agrees = nullptr) const;
    // Waits until word `w` has grown by `count` since entry.
    status wait_count(int w, uint64_t count, const char *what) const;
    // Reads word `w` of `peer` (acquire): a load where its heap is mapped here, else an atomic.
    status fetch_word(int peer, int w, uint64_t &out) const;
};

// The checks shared by the collectives (each names the call in its message).
status check_buf(const char *op, const void *p, size_t bytes, const char *what);
// check_buf, and the memory is host memory (collectives do not move device memory).
status check_host_buf(core::rank &r, const char *op, const void *p, size_t bytes, const char *what);
// Where a symmetric buffer lives: the symmetric heap or the program's static data, at the same
// offset on every rank.
struct sym_ref {
    uint16_t seg = 0;
    uint64_t off = 0;
};
status check_symmetric(core::rank &r, const char *op, const void *p, size_t bytes, const char *what,
                       sym_ref *ref = nullptr);
status check_root(const team &t, const char *op, int root);
status check_type_op(const char *op, hgas_dtype_t type, hgas_op_t rop);
// n * bytes, or invalid_arg naming `op` if it overflows.
status total_bytes(const char *op, int n, size_t bytes, size_t &out);
// A rank whose own arguments are bad: with peers, it enters the collective under desc_failed,
// so that the ranks that read its w_entered word (to write to it, or because they wait for
// its data) fail at once instead of waiting for it, and returns its error.
status fail_entered(team &t, status err);

// inout = in op inout (operands swapped), so that two partners compute bit-identical results
// whichever of them holds which operand.
void reduce_local_rev(void *inout, const void *in, size_t count, hgas_dtype_t type, hgas_op_t op);

}  // namespace detail
}  // namespace hgas::coll
