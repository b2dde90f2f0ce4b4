#include "mem/segment.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "base/shm.hpp"
#include "mem/shm_guard.hpp"

namespace hgas::mem {

__attribute__((no_sanitize("address"))) void copy_unchecked(void *dst, const void *src, size_t n) {
    auto *d = static_cast<volatile unsigned char *>(dst);
    const auto *s = static_cast<const volatile unsigned char *>(src);
    size_t i = 0;
    if (reinterpret_cast<uintptr_t>(dst) % 8 == 0 && reinterpret_cast<uintptr_t>(src) % 8 == 0)
        for (; i + 8 <= n; i += 8)
            *reinterpret_cast<volatile uint64_t *>(d + i) = *reinterpret_cast<const volatile uint64_t *>(s + i);
    for (; i < n; ++i) d[i] = s[i];
}

std::string shm_name(const std::string &job_id, int rank, uint16_t seg) {
    return "/hgas-" + job_id + "-" + std::to_string(rank) + "-" + std::to_string(seg);
}

host_mapping &host_mapping::operator=(host_mapping &&o) noexcept {
    if (this != &o) {
        this->~host_mapping();
        base_ = o.base_;
        size_ = o.size_;
        name_ = std::move(o.name_);
        owner_ = o.owner_;
        linked_ = o.linked_;
        keep_mapped_ = o.keep_mapped_;
        fd_ = o.fd_;
        committed_ = std::move(o.committed_);
        committed_bytes_ = o.committed_bytes_;
        o.base_ = nullptr;
        o.size_ = 0;
        o.owner_ = o.linked_ = o.keep_mapped_ = false;
        o.fd_ = -1;
        o.committed_bytes_ = 0;
    }
    return *this;
}

host_mapping::~host_mapping() {
    unlink();
    if (base_ && !keep_mapped_) {
        shm_unguard(base_);
        munmap(base_, size_);
    }
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    base_ = nullptr;
}

status host_mapping::commit(uint64_t off, uint64_t len) {
    if (fd_ < 0 || len == 0) return status::ok;  // not the owner's, or UCX's memory: nothing to reserve
    const uint64_t first = off / commit_granule;
    const uint64_t last = (std::min<uint64_t>(off + len, size_) - 1) / commit_granule;
    for (uint64_t g = first; g <= last;) {
        if (committed_[g / 64] >> (g % 64) & 1) {
            ++g;
            continue;
        }
        uint64_t h = g;  // one call for the whole run of missing granules
        while (h + 1 <= last && !(committed_[(h + 1) / 64] >> ((h + 1) % 64) & 1)) ++h;
        const uint64_t at = g * commit_granule;
        const uint64_t n = std::min<uint64_t>((h + 1) * commit_granule, size_) - at;
        int rc = posix_fallocate(fd_, static_cast<off_t>(at), static_cast<off_t>(n));
        if (rc != 0)
            return fail(status::no_memory, "cannot reserve %llu bytes of /dev/shm for %s (%s; %s); enlarge /dev/shm "
                        "or lower HGAS_HEAP_SIZE / HGAS_LOCAL_HEAP_SIZE and what the program allocates",
                        (unsigned long long)n, name_.c_str(), std::strerror(rc), shm_free_text().c_str());
        for (uint64_t i = g; i <= h; ++i) committed_[i / 64] |= uint64_t{1} << (i % 64);
        committed_bytes_ += n;
        g = h + 1;
    }
    return status::ok;
}

void host_mapping::unlink() {
    if (owner_ && linked_) shm_unlink(name_.c_str());
    linked_ = false;
}

size_t base_alignment(size_t size) {
    size_t align = 4096;
    while (align < (size_t{1} << 30) && align * 2 <= size) align *= 2;
    return align;
}

aligned_reservation::aligned_reservation(size_t size) {
    const size_t align = base_alignment(size);
    span_len_ = size + align;
    void *span = mmap(nullptr, span_len_, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (span == MAP_FAILED) return;
    span_ = static_cast<char *>(span);
    at_ = reinterpret_cast<void *>((reinterpret_cast<uintptr_t>(span) + align - 1) & ~(uintptr_t{align} - 1));
}

aligned_reservation::~aligned_reservation() {
    if (span_) munmap(span_, span_len_);
}

void aligned_reservation::keep(const void *mapped, size_t len) {
    if (!span_ || mapped != at_) return;  // elsewhere: the destructor frees the whole span
    const uintptr_t lo = reinterpret_cast<uintptr_t>(span_), at = reinterpret_cast<uintptr_t>(at_);
    const uintptr_t end = std::min(at + ((len + 4095) & ~uintptr_t{4095}), lo + span_len_);
    if (at > lo) munmap(span_, at - lo);
    if (lo + span_len_ > end) munmap(reinterpret_cast<void *>(end), lo + span_len_ - end);
    span_ = nullptr;
}

namespace {
// Maps `fd` (size bytes) at an address aligned to base_alignment(size): over a reservation,
// the rest of which is then freed.
void *map_aligned(int fd, size_t size) {
    aligned_reservation hold(size);
    if (!hold.at()) return mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    void *p = mmap(hold.at(), size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0);
    if (p != MAP_FAILED) hold.keep(p, size);
    return p;
}
}  // namespace

result<host_mapping> host_mapping::create(const std::string &prefix, size_t size) {
    std::string name;
    HGAS_TRY_ASSIGN(int fd, shm_create_unique(prefix, name, "segment"));
    host_mapping m;
    m.name_ = name;
    m.owner_ = true;
    m.linked_ = true;
    m.fd_ = fd;  // the destructor closes it (and unlinks the name) on every path from here
    // Sized, not reserved: pages are taken from /dev/shm by commit() (what the allocator hands
    // out) or on first touch, so that a rank costs /dev/shm what it uses, not its heap size.
    if (ftruncate(fd, static_cast<off_t>(size)) != 0)
        return fail(status::no_memory, "cannot size shared memory %s to %zu bytes: %s; lower HGAS_HEAP_SIZE / "
                    "HGAS_LOCAL_HEAP_SIZE", name.c_str(), size, std::strerror(errno));
    m.committed_.assign((size + commit_granule * 64 - 1) / (commit_granule * 64), 0);
    void *p = map_aligned(fd, size);
    if (p == MAP_FAILED)
        return fail(status::no_memory, "cannot map %zu bytes of shared memory %s: %s", size, name.c_str(),
                    std::strerror(errno));
    m.base_ = p;
    m.size_ = size;
    shm_guard(p, size, name);
    return m;
}

result<host_mapping> host_mapping::create_over(const std::string &prefix, void *addr, size_t size) {
    HGAS_TRY_ASSIGN(host_mapping m, create(prefix, size));
    HGAS_TRY(m.commit(0, size));  // every page is written now
    copy_unchecked(m.base_, addr, size);
    // One system call replaces the old pages with the copy, so the range is never unmapped
    // in between (another thread of the process may still read its variables).
    void *p = mremap(m.base_, size, size, MREMAP_MAYMOVE | MREMAP_FIXED, addr);
    if (p != addr)
        return fail(status::no_memory, "cannot move shared memory %s over [%p, +%zu): %s", m.name_.c_str(), addr, size,
                    std::strerror(errno));  // m unmaps the copy; the original pages are untouched
    shm_unguard(m.base_);
    m.base_ = addr;
    m.keep_mapped_ = true;
    shm_guard(addr, size, m.name_);
    return m;
}

namespace {
result<host_mapping> map_peer_fd(int fd, const std::string &name, size_t size);
}  // namespace

result<host_mapping> host_mapping::attach(const std::string &name, size_t size) {
    int fd = shm_open(name.c_str(), O_RDWR, 0);
    if (fd < 0)
        return fail(status::bootstrap, "cannot open peer shared memory %s: %s (peer died, or it runs on another "
                    "node: set HGAS_NODE_NAME consistently)", name.c_str(), std::strerror(errno));
    return map_peer_fd(fd, name, size);
}

result<host_mapping> host_mapping::attach_fd(long pid, int fd, uint64_t dev, uint64_t ino, const std::string &name,
                                             size_t size) {
    const std::string path = "/proc/" + std::to_string(pid) + "/fd/" + std::to_string(fd);
    int f = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (f < 0)
        return fail(status::peer_failed, "cannot open %s (shared memory %s): %s", path.c_str(), name.c_str(),
                    errno == ENOENT ? "the process has exited" : std::strerror(errno));
    struct stat st;
    if (fstat(f, &st) != 0 || static_cast<uint64_t>(st.st_dev) != dev || static_cast<uint64_t>(st.st_ino) != ino) {
        ::close(f);
        return fail(status::peer_failed, "%s is no longer shared memory %s: the process has exited", path.c_str(),
                    name.c_str());
    }
    return map_peer_fd(f, name, size);
}

namespace {
// Maps (and closes) `fd`, a peer's segment of at least `size` bytes.
result<host_mapping> map_peer_fd(int fd, const std::string &name, size_t size) {
    struct stat st;
    if (fstat(fd, &st) != 0 || static_cast<size_t>(st.st_size) < size) {
        ::close(fd);
        return fail(status::bootstrap, "peer shared memory %s is smaller than announced (%zu bytes)", name.c_str(),
                    size);
    }
    void *p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    ::close(fd);
    if (p == MAP_FAILED)
        return fail(status::no_memory, "cannot map peer shared memory %s: %s", name.c_str(), std::strerror(errno));
    return host_mapping::adopt_peer(p, size, name);
}
}  // namespace

host_mapping host_mapping::adopt_peer(void *base, size_t size, const std::string &name) {
    host_mapping m;
    m.base_ = base;
    m.size_ = size;
    m.name_ = name;
    shm_guard(base, size, name);
    return m;
}

}  // namespace hgas::mem
