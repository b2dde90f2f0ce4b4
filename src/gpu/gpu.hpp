// The gpu layer: one interface over the device runtimes hgas moves bytes with. Two
// implementations: `cuda` (the CUDA runtime: segments exported through CUDA IPC -- VMM with
// POSIX-fd export, or legacy handles -- copies on internal streams, atomics by a one-thread
// kernel) and `sim` (host memory that only its own copy engine may touch, with a settable
// latency and bandwidth, so that every staging and pipelining path runs where there is no
// GPU).
//
// Per-rank state: a rank owns one device object per kind it uses. Calls come from the rank's
// thread, or from its progress helper while the rank's thread is inside hgas (the progress
// engine serializes them), never from two threads at once.
//
// Completion: copies are asynchronous on one of the device's internal streams and return a
// ticket; test() says whether it (and everything before it on that stream) has completed.
// Streams are FIFO: a later ticket's completion implies the earlier ones'.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/ops.hpp"
#include "base/settings.hpp"
#include "base/status.hpp"

namespace hgas::gpu {

enum class kind : uint8_t { host = 0, cuda = 1, sim = 2 };
const char *kind_name(kind k);

// A user's device allocation (one in no hgas heap: cudaMalloc'd) exported to a same-node peer,
// so that the peer copies a large tagged message straight out of it (msg, README "Rendezvous
// by IPC"). `buffer_id` is the driver's id of the allocation (CU_POINTER_ATTRIBUTE_BUFFER_ID:
// unique over the process's life, so an allocation freed and made again at the same address
// has another id); an importer's cache of mappings is keyed by peer, base, size and that id.
struct user_export {
    uint64_t base = 0, size = 0, buffer_id = 0;
    uint64_t offset = 0;   // of the message's first byte in the allocation
    uint8_t kind = 0;      // gpu::kind
    uint8_t pad[3] = {};
    uint32_t handle_len = 0;
    char bus_id[16] = {};  // cuda: the exporter's GPU (PCI bus id)
    uint8_t handle[96] = {};  // cuda: cudaIpcMemHandle_t or a vmm_handle; sim: the shared-memory object's name or a vmm_handle
};
// The handle of a VMM allocation (user_export::handle, handle_len == sizeof): the exporter's fd
// server (fd_pass.hpp, its random tag) answers `key` with the allocation's POSIX fd.
struct vmm_handle {
    char magic[4] = {'v', 'm', 'm', 0};
    uint32_t key = 0;
    char sock_tag[24] = {};
    bool valid(uint32_t len) const { return len == sizeof(vmm_handle) && !std::memcmp(magic, "vmm", 4); }
};
static_assert(sizeof(vmm_handle) <= sizeof(user_export::handle));
static_assert(sizeof(user_export) == 152);

struct ticket {
    int stream = 0;
    uint64_t seq = 0;  // 0: nothing to wait for
};

class device {
public:
    virtual ~device() = default;
    virtual kind which() const = 0;
    // "cuda:0 NVIDIA H200 (sm_90)", "sim (latency 2 us, 20 GB/s)".
    virtual std::string describe() const = 0;
    virtual int ordinal() const = 0;
    virtual int streams() const = 0;

    // Segment memory (exportable to ranks on the node). `blob` is what peers pass to map_peer.
    virtual result<void *> alloc_segment(uint16_t seg, size_t n, std::string &blob) = 0;
    // Maps a same-node peer's segment into this process. nullptr (and ok) when this device
    // cannot reach it directly (no peer access): the caller then stages through host memory.
    virtual result<void *> map_peer(int peer, const std::string &blob, size_t n) = 0;
    // Every peer has mapped this rank's segments: drop names that would outlive the job.
    virtual void segments_attached() {}

    // Device memory of this kind that this process can name: own segments, mapped peers and,
    // for cuda, any cudaMalloc'd pointer of the process. [p, p+n) must lie in one allocation.
    virtual bool owns(const void *p, size_t n) = 0;

    // Copies between any two of: host memory, device memory this process names. With
    // `track` false the device may skip what makes the copy testable on its own (an event per
    // copy) and return a ticket with seq 0; mark() then tracks everything before it.
    virtual result<ticket> copy_async(void *dst, const void *src, size_t n, int stream, bool track = true) = 0;
    // A copy whose ticket the caller tests until it is done (a blocking put or get): a device
    // may track it more cheaply than copy_async's own event (cuda: none while the copy is the
    // last work on its stream, whose drain then completes it; work put on the stream after it
    // first records the event, so the ticket never waits for that work).
    virtual result<ticket> copy_waited(void *dst, const void *src, size_t n, int stream) {
        return copy_async(dst, src, n, stream, true);
    }
    // Gathers the blocks of a layout from `buf` into contiguous `packed` (unpack: scatters them
    // back), both this device's memory, with one kernel on `stream`. Blocks: the strided shape
    // base + i2*s2 + i1*s1 + i0*s0 (i0 fastest, `block` bytes each, packed in that order), or, with
    // `table` (device memory, `count` triples: offset in buf, offset in packed, bytes), explicit
    // blocks. unsupported where the device has no kernels (sim: the caller copies block by block).
    struct blocks {
        uint64_t base = 0, n[3] = {1, 1, 1}, s[3] = {0, 0, 0}, block = 0;
        const uint64_t *table = nullptr;
        uint64_t count = 0;
    };
    virtual result<ticket> gather(char *, char *, const blocks &, bool, int) {
        return fail(status::unsupported, "%s: no pack kernels", describe().c_str());
    }
    // inout[i] = inout[i] op in[i] (in[i] op inout[i] with `rev`) for `count` elements of
    // hgas_dtype_t `type`, hgas_op_t `op` (checked by the caller), by the device itself on
    // `stream`, after the work submitted to it before: a kernel (cuda), the engine (sim).
    // `inout` is this device's memory; `in` this device's memory or host memory (the
    // collective scratch). The values are reduce_cpu.hpp's, bit for bit.
    virtual result<ticket> reduce(void *, const void *, size_t, int, int, bool, int) {
        return fail(status::unsupported, "%s: no reduction kernels", describe().c_str());
    }
    // The allreduce of a small vector by one kernel on every member's GPU (cuda only; the
    // collectives' "kernel" algorithm, coll/direct.cpp), and the stream-ordered broadcast and
    // fcollect. Each block b of a member's kernel covers bytes [b * slice, (b + 1) * slice) of
    // dst and trades words with block b of every other member, in the members' flag blocks
    // (flags[q]: member q's, as this GPU addresses it; team_kernel_flag_words words: for each
    // (block, member) an entered, a done and an offset word for the stream-ordered kernels and
    // a done word for the blocking ones):
    // 1. entry (stream-ordered): it stores where this member's vector lies (its offset in the
    //    segment, with the call's fingerprint) and then `epoch` into every member's block, and
    //    waits for the same from every member (a fingerprint that differs fails the call: a
    //    mismatch); the blocking call's host has entered already and passes `in`;
    // 2. it reads its slice of the inputs where they lie (base[q] + the offset member q sent:
    //    its own memory, a peer GPU's by IPC, a rank thread's of this process) into shared
    //    memory, combining them in member order for allreduce (every member computes the same
    //    bits);
    // 3. done: it stores `epoch` into every member's done word and waits for every member's;
    // 4. it writes its slice of dst (which may be this member's vector: nobody reads it now).
    // Stream-ordered and blocking kernels count their own epochs (team::kernel_epoch,
    // blocking_epoch) in words of their own, so neither waits for the other. Epochs grow by one
    // per call; the stream-ordered kernels of a team run on each GPU in call order, whatever
    // their streams (each waits for the last one on another stream), so while a kernel waits a
    // word holds its epoch or an earlier one. A wait takes only its own epoch: a later one
    // means the members are out of step (a kernel of the team failed or gave up, and a member
    // went on), and fails the call, so a late kernel never uses another call's offsets or
    // signals; a block writes dst only when every wait of it succeeded.
    static constexpr int team_kernel_members = 8;                      // the most members it serves
    static constexpr int team_kernel_slots = 80;                       // core::internal_objects::coll_team_slots
    static constexpr int team_kernel_blocks = 128;                     // the most blocks of a kernel
    static constexpr size_t team_kernel_max_bytes = size_t{1} << 20;   // the largest dst (8 KiB a block)
    // At most this much where two members share a GPU (MPS): their kernels' blocks wait for
    // each other and must all fit on it at once.
    static constexpr size_t team_kernel_shared_gpu_max_bytes = size_t{64} << 10;
    static constexpr size_t team_kernel_flag_words =
        4 * team_kernel_blocks * team_kernel_members + 8;  // per team slot (the last 8: spare)
    enum team_report : int { report_blocking = 0, report_stream = 1 };
    // What team_kernel_timed_out returns: 1 + the member, why, and the team's slot.
    static constexpr int team_timeout = 1 << 8, team_mismatch = 2 << 8, team_out_of_step = 3 << 8,
                         team_why_mask = 7 << 8, team_report_slot_shift = 16;
    // What the kernel computes (B = count elements of `type`, in bytes): allreduce: dst[0, B)
    // = every member's vector combined; broadcast: dst[0, B) = member root's vector; fcollect:
    // dst[q B, (q + 1) B) = member q's vector, for every member q (n B bytes, the slices over
    // them); alltoall (team_group_op's team_alltoall_op, below): member q's vector is n B bytes
    // and dst[q B, (q + 1) B) = its block [me B, (me + 1) B); reduce_scatter (team_group_op's
    // team_reduce_scatter_op): every member's vector is n B bytes and dst[0, B) = their blocks
    // [me B, (me + 1) B) combined in member order. For the copies `type` is HGAS_UINT8 and `op`
    // unused.
    enum team_op : int { team_allreduce_op = 0, team_broadcast_op = 1, team_fcollect_op = 2 };
    struct team_reduce {
        int what = team_allreduce_op;
        int root = 0;  // broadcast
        void *dst = nullptr;
        // This member's vector copied (in stream order) to copy_to first, copy_bytes of it (its
        // vector: alltoall's and reduce_scatter's n blocks), when copy_src is not null.
        const void *copy_src = nullptr;
        void *copy_to = nullptr;
        size_t copy_bytes = 0;
        const char *base[team_kernel_members] = {};  // member q's segment as this GPU addresses it
        uint64_t in_off = 0;                         // this member's vector: base[me] + in_off (< 2^40)
        uint32_t fp = 0;  // the call's fingerprint (24 bits), sent with in_off: members that differ fail
        // The blocking call: its host entered and knows where every member's vector lies (`in`,
        // as this GPU addresses it); the kernel skips step 1 and uses the blocking done words.
        bool blocking = false;
        const void *in[team_kernel_members] = {};
        uint64_t *flags[team_kernel_members] = {};  // member q's flag block for this team
        int n = 0, me = 0, slot = 0;
        size_t count = 0;
        int type = 0, op = 0;
        uint64_t epoch = 0;
        uint64_t timeout_ns = 0;  // a block's wait for its peers fails after this long
        // Blocking calls of a team whose members are all rank threads of this process: they
        // meet on the host instead (team_group, under key `group_key`); where that does not
        // run the call, the kernel above.
        bool in_process = false;
        uint64_t group_key = 0;
        std::function<status()> progress;  // the rank's progress while it waits at that meeting
    };
    // What team_group computes beyond team_op (count: elements of `type`): reduce: member
    // root's output = every member's vector combined (no other output); reduce_scatter: member
    // p's output = elements [p count, (p + 1) count) of every member's n count combined;
    // alltoall (bytes): member p's output [q B, (q + 1) B) = member q's [p B, (p + 1) B);
    // barrier: nothing but the order.
    enum team_group_op : int { team_reduce_op = 3, team_reduce_scatter_op = 4, team_alltoall_op = 5, team_barrier_op = 6 };
    static constexpr int team_group_members = 32;  // the most members of one group kernel
    // One call of a team whose members are all rank threads of this process: each member's part.
    // The members meet on the host (team_meet.hpp); where all of them are on one GPU and every
    // vector is device memory of it, the last to arrive makes its stream wait for every
    // member's stream to reach the call (events), launches one kernel that computes every
    // member's output, and the others' streams wait for that kernel: no wait on the GPU is for
    // work issued after it, so streams that share the GPU's work queues cannot stall each
    // other (docs/threads.md). Elsewhere no member runs it: each takes the other paths.
    struct team_group_call {
        int what = team_allreduce_op;  // team_op or team_group_op
        int root = 0;
        int n = 0, me = 0, slot = 0;
        size_t count = 0;  // elements of `type` (the copies: bytes, type HGAS_UINT8)
        int type = 0, op = 0;
        const void *in = nullptr;  // this member's vector (broadcast: the root's only)
        void *out = nullptr;       // its output (reduce: the root's only)
        bool usable = false;       // in and out are device memory (the coll layer checked kinds)
        // False: this member's own arguments failed a check, and its call returns that error. It
        // meets all the same, so that the team's later calls stay in step, and reports nothing
        // more (members whose arguments differ from member 0's fail: what, count, type, op, root).
        bool valid = true;
        uint64_t key = 0;          // which call of which team: the same on every member
        double timeout_s = 0;
        const char *name = "";     // the call, for messages
        std::function<status()> progress;  // the rank's progress while it waits (team_meet.hpp)
    };
    // The arguments of the one kernel: every member's vector and output (nullptr: none).
    struct team_group_args {
        int what = team_allreduce_op;
        int root = 0;
        int n = 0;
        size_t count = 0;
        int type = 0, op = 0;
        const void *in[team_group_members] = {};
        void *out[team_group_members] = {};
    };
    // What team_group did: ran the call; found that the members' arguments differ (nothing ran;
    // on a user's stream the next sync reports it, as the kernels do); or ran nothing, and every
    // member takes the other paths (not one GPU, not device memory, overlapping vectors, a
    // member whose own arguments failed a check).
    enum class group_ran { ran, mismatch, other_paths };
    // Runs `c` as above, on internal stream `stream` (blocking: the caller then waits for a
    // ticket of that stream) or the user's stream `user`.
    virtual result<group_ran> team_group(const team_group_call &, int, bool, void *) { return group_ran::other_paths; }
    // Whether this device runs team_allreduce: a cuda GPU that does not time-slice between
    // processes (there a member's kernel would wait for the other's slice: sharing.hpp).
    virtual bool team_kernels() const { return false; }
    // Blocking (`user_stream` false): on internal stream `stream`, with a ticket; else on the
    // user's stream `user` (a cudaStream_t; NULL is the legacy default stream), no ticket.
    virtual result<ticket> team_allreduce(const team_reduce &, int, bool, void *) {
        return fail(status::unsupported, "%s: no team kernels", describe().c_str());
    }
    // Waits (up to timeout_s) until the team's last stream-ordered kernel on this GPU (slot) is
    // done, before its flags are cleared.
    virtual status team_quiesce(int, double) { return status::ok; }
    // After a team_allreduce: 0, or what a kernel of that report kind found (team_report's
    // fields: 1 + the member, why, the slot), then cleared.
    virtual int team_kernel_timed_out(int) { return 0; }
    // A ticket that completes when everything submitted to `stream` so far has.
    virtual result<ticket> mark(int stream) = 0;
    virtual result<bool> test(ticket t) = 0;
    // What a ticket that did not complete is waiting on, for the message of a wait that timed
    // out (the copy agent's or the stream's state); empty where there is nothing to say.
    virtual std::string ticket_state(ticket) { return {}; }
    // Lets work that nobody waits for yet make progress, from the progress engine (either
    // thread). A GPU's engines run on their own: nothing to do. sim's passive engine carries
    // out what has fallen due, as a GPU would have by now.
    virtual void advance() {}
    // Atomic on device memory this process names; complete at return. Width 4 or 8.
    virtual result<uint64_t> amo(void *p, amo_op op, unsigned width, uint64_t operand, uint64_t compare) = 0;

    // Page-locked host memory for staging, and registration of existing host ranges (the
    // shared-memory heaps) so that the device's copy engines reach them directly.
    virtual result<void *> alloc_pinned(size_t n) = 0;
    virtual void free_pinned(void *p) = 0;
    virtual status register_host(void *p, size_t n) = 0;
    virtual void unregister_host(void *p) = 0;
    // A user's host range (hgas_register): page-locked and mapped for the device where the
    // device has such a thing. True when this call registered it (and unregister_user must
    // undo it); false when there is nothing to do (sim) or the user had registered it already.
    virtual result<bool> register_user(void *, size_t) { return false; }
    virtual void unregister_user(void *) {}

    // --- user device allocations shared with same-node peers (gpu/README.md) ---
    // Fills `e` for [p, p+n) when it lies in one user allocation this device can export
    // (cuda: a legacy cudaMalloc allocation; not managed memory, not VMM or pool memory, not
    // hgas's own heaps or mapped peers). False: it cannot; the caller takes another path.
    virtual bool export_user(const void *, size_t, user_export &) { return false; }
    // Maps the allocation `e` of rank `peer` (same node) into this process and returns its
    // base, or nullptr (and ok) where this device cannot reach it (no peer access): the caller
    // then takes another path.
    virtual result<void *> import_user(int, const user_export &) { return static_cast<void *>(nullptr); }
    // Undoes import_user (no copy from the mapping may be in flight).
    virtual void close_user(void *) {}
    // A user allocation as the program would make it (cuda: cudaMalloc; sim: an allocation of
    // its own outside the heaps, at `at` when given and free): for hgas's tests and benchmarks.
    virtual result<void *> alloc_user(size_t, void *) {
        return fail(status::unsupported, "%s: no user allocations", describe().c_str());
    }
    virtual status free_user(void *) { return fail(status::unsupported, "%s: no user allocations", describe().c_str()); }
    // A user allocation made by virtual memory management (cuda: cuMemCreate + cuMemMap, as
    // PyTorch's expandable segments and many pools do; sim: an anonymous memory file). With
    // `exportable` it may be shared as a POSIX fd (cuda: requestedHandleTypes POSIX_FILE_DESCRIPTOR)
    // and export_user exports it that way; without, export_user refuses it. Freed by free_user.
    virtual result<void *> alloc_user_vmm(size_t, void *, bool) {
        return fail(status::unsupported, "%s: no VMM user allocations", describe().c_str());
    }
};

class reg_cache;

struct open_args {
    const settings *cfg = nullptr;
    std::string job_id;
    int rank = 0;
    int local_rank = 0;
    int local_n = 1;  // ranks on this node: with more than GPUs, ranks share a GPU
    int ranks_per_process = 1;  // ranks as threads of one process (one CUDA context)
    // The rank's registrations of user host memory (hgas_register), consulted by copies;
    // outlives the device.
    reg_cache *regs = nullptr;
};

// cuda: status::unsupported in a build without CUDA or where no GPU is visible (the message
// says which). sim: always available.
result<std::unique_ptr<device>> open_cuda(const open_args &a);
result<std::unique_ptr<device>> open_sim(const open_args &a);
// Whether this build has the CUDA implementation.
bool cuda_built();
// The GPUs this process sees and which pairs have peer access (for hgas-info): one line each;
// an explanation when there are none.
std::vector<std::string> cuda_machine();
// Warns once per process when CUDA's lazy loading is on: kernels that wait on hgas's proxy can
// then deadlock with another kernel's first launch (called where the device API starts).
void warn_if_lazy_loading();
// How the cuda heaps would be exported to same-node peers under HGAS_CUDA_IPC=`setting`
// (auto, vmm, legacy), per visible GPU (for hgas-info).
std::vector<std::string> cuda_ipc_plan(const std::string &setting);

}  // namespace hgas::gpu
