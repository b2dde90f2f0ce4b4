// Segments: the contiguous ranges of memory that a rank exposes in the global address space.
// A host segment is POSIX shared memory (/dev/shm/hgas-<job>-<rank>-<seg>-<random>, mode 0600) so that
// ranks on the same node can map it; the owner unlinks the name once every peer has mapped it,
// so nothing is left behind however the job ends after init.
// A segment is sparse when created: /dev/shm pages are taken only for what its allocator hands
// out (host_mapping::commit) or what is touched; a touch that /dev/shm cannot back is a SIGBUS,
// which shm_guard.hpp turns into a message naming the cause (README.md: "Footprint").
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "base/status.hpp"
#include "gpu/gpu.hpp"

namespace hgas::mem {

using gpu::kind;
using gpu::kind_name;

// Segment ids are the same on every rank (HGAS_SEG_* in hgas.h). Each kind has a symmetric
// heap and a heap for non-collective allocations; the static segment is the program's data.
inline constexpr uint16_t seg_symmetric = 0;       // symmetric host heap (hgas_malloc)
inline constexpr uint16_t seg_local = 1;           // non-collective host heap (hgas_alloc)
inline constexpr uint16_t seg_static = 2;          // the program's data and bss (static_data.hpp)
inline constexpr uint16_t seg_cuda_symmetric = 3;
inline constexpr uint16_t seg_cuda_local = 4;
inline constexpr uint16_t seg_sim_symmetric = 5;
inline constexpr uint16_t seg_sim_local = 6;
inline constexpr uint16_t seg_count = 7;

constexpr kind segment_kind(uint16_t seg) {
    return seg == seg_cuda_symmetric || seg == seg_cuda_local ? kind::cuda
           : seg == seg_sim_symmetric || seg == seg_sim_local ? kind::sim
                                                               : kind::host;
}
constexpr bool is_device_segment(uint16_t seg) { return segment_kind(seg) != kind::host; }
// The symmetric / local heap of a kind.
constexpr uint16_t symmetric_segment(kind k) {
    return k == kind::cuda ? seg_cuda_symmetric : k == kind::sim ? seg_sim_symmetric : seg_symmetric;
}
constexpr uint16_t local_segment(kind k) {
    return k == kind::cuda ? seg_cuda_local : k == kind::sim ? seg_sim_local : seg_local;
}

// One mapping of a host segment: owned (created by this rank) or attached (a peer's).
class host_mapping {
public:
    host_mapping() = default;
    host_mapping(const host_mapping &) = delete;
    host_mapping &operator=(const host_mapping &) = delete;
    host_mapping(host_mapping &&o) noexcept { *this = std::move(o); }
    host_mapping &operator=(host_mapping &&o) noexcept;
    ~host_mapping();

    // Creates and maps a new shared segment named `prefix-<64 random bits>` (base/shm.hpp: no
    // other user can predict the name, so none can block it; an existing name is never reused).
    // name() is the full name, which peers learn through the bootstrap store. The segment is
    // sized but sparse (zero-filled, no /dev/shm pages yet): commit() reserves pages.
    static result<host_mapping> create(const std::string &prefix, size_t size);
    // Maps a peer's segment by name; checks its size.
    static result<host_mapping> attach(const std::string &name, size_t size);
    // Maps a peer's segment through the descriptor its owner keeps open (/proc/<pid>/fd/<fd>),
    // which works after the name is gone (lazy peer attach: README.md, "Peer attach"). The
    // file must be the one announced (device and inode), so a reused pid or descriptor number
    // is refused. `name` is for messages only.
    static result<host_mapping> attach_fd(long pid, int fd, uint64_t dev, uint64_t ino, const std::string &name,
                                          size_t size);
    // Creates a shared segment holding the current contents of the page-aligned range
    // [addr, addr+size) and moves it over that range (mremap): the memory keeps its addresses
    // and contents and becomes shareable by name. The mapping is never unmapped, not even by
    // the destructor, since what lived there before is gone (static_data.hpp).
    static result<host_mapping> create_over(const std::string &prefix, void *addr, size_t size);
    // Removes the name (mappings stay valid). Idempotent.
    void unlink();
    // Owner only: reserves the /dev/shm pages of [off, off+len) (whole commit_granule pieces,
    // each once), so that the range can never SIGBUS. Fails with a message naming /dev/shm and
    // what is free there when it is full. The allocator calls it for every block it hands out.
    status commit(uint64_t off, uint64_t len);
    // Bytes reserved so far by commit() (granules).
    uint64_t committed() const { return committed_bytes_; }
    static constexpr uint64_t commit_granule = 1 << 20;

    void *base() const { return base_; }
    size_t size() const { return size_; }
    const std::string &name() const { return name_; }
    // A peer's segment mapped at [base, +size) (attach and attach_fd): unmapped by the destructor.
    static host_mapping adopt_peer(void *base, size_t size, const std::string &name);
    // Owner: the open descriptor of the segment (peers attach through it), or -1.
    int fd() const { return fd_; }

private:
    void *base_ = nullptr;
    size_t size_ = 0;
    std::string name_;
    bool owner_ = false;
    bool linked_ = false;
    bool keep_mapped_ = false;  // create_over: the program's own memory, never unmapped
    int fd_ = -1;               // owner: kept for commit()
    std::vector<uint64_t> committed_;  // owner: bitmap of committed granules
    uint64_t committed_bytes_ = 0;
};

// Copies `n` bytes without the address sanitizer's checks: the program's data that
// create_over moves holds the redzones that ASan puts around globals, which memcpy would
// report. Word by word through volatile pointers, so that it is not turned into memcpy.
void copy_unchecked(void *dst, const void *src, size_t n);

/// Heaps start at an address aligned to the largest power of two <= their size (from 4 KiB up
/// to 1 GiB), so that an offset aligned to A is an address aligned to A on every rank
/// (hgas_align, shmem_align). base_alignment gives that power.
size_t base_alignment(size_t size);

/// Address space held (PROT_NONE, no memory) around an aligned address, for an allocator that
/// takes a placement hint (UCX) and maps over it with MAP_FIXED. A hint that was merely free
/// address space a moment ago is not safe: another thread's mapping made meanwhile (another
/// rank thread's heap) would be replaced silently, and two ranks would share one heap. The
/// reservation stays until the allocator has mapped: keep() then frees the reserved parts
/// around what it mapped at at(); the destructor frees whatever was not kept (the allocator put
/// the memory elsewhere, or failed).
class aligned_reservation {
public:
    explicit aligned_reservation(size_t size);
    ~aligned_reservation();
    aligned_reservation(const aligned_reservation &) = delete;
    aligned_reservation &operator=(const aligned_reservation &) = delete;
    void *at() const { return at_; }  // nullptr when no address space could be reserved
    // The allocator mapped [mapped, mapped + len): if that is at(), the mapping stays and the
    // reservation's rest is freed; otherwise the whole reservation is.
    void keep(const void *mapped, size_t len);

private:
    char *span_ = nullptr;
    size_t span_len_ = 0;
    void *at_ = nullptr;
};

// "/hgas-<job>-<rank>-<seg>": the prefix of the segment's name (host_mapping::create appends a
// random part); the launcher's safety net removes "hgas-<job>-*".
std::string shm_name(const std::string &job_id, int rank, uint16_t seg);

}  // namespace hgas::mem
