// mem: the deterministic allocator, global pointer checks, shared-memory segments.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>

#include <cstring>
#include <random>
#include <vector>

#include "mem/allocator.hpp"
#include "mem/gptr.hpp"
#include "mem/segment.hpp"
#include "mem/shm_guard.hpp"

using namespace hgas;
using namespace hgas::mem;

TEST(Allocator, AlignedFirstFitAndCoalescing) {
    allocator a(1 << 20);
    auto x = a.allocate(100, 64), y = a.allocate(1, 4096), z = a.allocate(5000, 64);
    ASSERT_TRUE(x.ok() && y.ok() && z.ok());
    EXPECT_EQ(*x % 64, 0u);
    EXPECT_EQ(*y % 4096, 0u);
    EXPECT_EQ(a.block_size(*x), 128u);  // rounded to the minimum alignment
    uint64_t start, size;
    ASSERT_TRUE(a.find_block(*z + 10, start, size));
    EXPECT_EQ(start, *z);
    EXPECT_EQ(a.release(*y), status::ok);
    EXPECT_EQ(a.release(*y), status::invalid_pointer);  // double free
    EXPECT_EQ(a.release(*x + 64), status::invalid_pointer);
    EXPECT_EQ(a.release(*x), status::ok);
    EXPECT_EQ(a.release(*z), status::ok);
    EXPECT_EQ(a.in_use(), 0u);
    EXPECT_EQ(a.largest_free(), 1u << 20);  // everything coalesced back into one block
}

TEST(Allocator, SameSequenceSameOffsetsAndCleanExhaustion) {
    allocator a(1 << 16), b(1 << 16);
    std::mt19937 rng(7);
    std::vector<uint64_t> live_a, live_b;
    for (int i = 0; i < 2000; ++i) {
        if (!live_a.empty() && rng() % 3 == 0) {
            size_t k = rng() % live_a.size();
            ASSERT_EQ(a.release(live_a[k]), status::ok);
            ASSERT_EQ(b.release(live_b[k]), status::ok);
            live_a.erase(live_a.begin() + k);
            live_b.erase(live_b.begin() + k);
        } else {
            uint64_t sz = 1 + rng() % 3000, al = 64u << (rng() % 4);
            auto ra = a.allocate(sz, al), rb = b.allocate(sz, al);
            ASSERT_EQ(ra.ok(), rb.ok());
            if (!ra.ok()) {
                EXPECT_EQ(ra.error(), status::no_memory);
                continue;
            }
            ASSERT_EQ(*ra, *rb);  // what makes collective allocation symmetric
            live_a.push_back(*ra);
            live_b.push_back(*rb);
        }
    }
    EXPECT_EQ(a.allocate(1 << 17, 64).error(), status::no_memory);
    EXPECT_EQ(a.allocate(0, 64).error(), status::invalid_arg);
    EXPECT_EQ(a.allocate(8, 3).error(), status::invalid_arg);
}

TEST(GlobalPointer, RangeChecks) {
    hgas_gptr_t p = make_gptr(1, seg_symmetric, 100);
    EXPECT_EQ(check_range("t", p, 10, 4, 1000), status::ok);
    EXPECT_EQ(check_range("t", p, 901, 4, 1000), status::out_of_bounds);
    EXPECT_NE(last_error().find("rank 1"), std::string::npos) << last_error();
    EXPECT_EQ(check_range("t", p, ~0ull, 4, 1000), status::out_of_bounds);  // no overflow
    EXPECT_EQ(check_range("t", make_gptr(4, 0, 0), 1, 4, 1000), status::invalid_arg);
    EXPECT_EQ(check_range("t", make_gptr(0, HGAS_SEG_NULL, 0), 1, 4, 1000), status::invalid_pointer);
    EXPECT_EQ(check_range("t", p, 1, 4, 0), status::invalid_pointer);
    EXPECT_EQ(check_aligned("t", make_gptr(0, 0, 12), 8), status::misaligned);
    EXPECT_EQ(check_aligned("t", make_gptr(0, 0, 12), 4), status::ok);
    EXPECT_TRUE(in_bounds(1000, 0, 1000));
    EXPECT_FALSE(in_bounds(1001, 0, 1000));
}

// The runtime's own blocks (allocated first) are sealed below the user base: a user free of
// them used to succeed (a double hgas_all_free released offset 0, the barrier words).
TEST(Allocator, RuntimePrefixIsNeitherFreedNorReported) {
    allocator a(1 << 16);
    auto r1 = a.allocate(100, 64), r2 = a.allocate(4000, 64);
    ASSERT_TRUE(r1.ok() && r2.ok());
    a.seal_runtime_prefix();
    EXPECT_EQ(a.user_base(), 128u + 4032u);
    EXPECT_EQ(a.release(*r1), status::invalid_pointer);
    EXPECT_EQ(a.block_size(*r2), 0u);
    uint64_t start, size;
    EXPECT_FALSE(a.find_block(*r1 + 8, start, size));
    auto u = a.allocate(10, 64);
    ASSERT_TRUE(u.ok());
    EXPECT_GE(*u, a.user_base());
    ASSERT_TRUE(a.find_block(*u + 9, start, size));
    EXPECT_EQ(size, 10u);  // as asked for, not rounded: what checked mode holds accesses to
    EXPECT_FALSE(a.block_before(*u - 1, start, size));  // nothing of the user's below it
    ASSERT_TRUE(a.block_after(0, start, size));
    EXPECT_EQ(start, *u);
    EXPECT_EQ(a.release(*u), status::ok);
    EXPECT_EQ(a.largest_free(), (1u << 16) - a.user_base());
}

TEST(GlobalPointer, UserBaseReservedFlagsAndCheckedAllocations) {
    hgas_gptr_t p = make_gptr(1, seg_symmetric, 100);
    EXPECT_EQ(check_range("t", p, 8, 4, 1000, 64), status::ok);
    EXPECT_EQ(check_range("t", make_gptr(1, seg_symmetric, 48), 8, 4, 1000, 64), status::out_of_bounds);
    EXPECT_NE(last_error().find("hgas's own objects"), std::string::npos) << last_error();
    p.flags = 2;
    EXPECT_EQ(check_range("t", p, 8, 4, 1000), status::invalid_arg);
    EXPECT_NE(last_error().find("reserved flag bits"), std::string::npos) << last_error();
    allocator a(1 << 16);
    auto x = a.allocate(64, 64), y = a.allocate(64, 64);
    ASSERT_TRUE(x.ok() && y.ok());
    ASSERT_EQ(a.release(*y), status::ok);
    EXPECT_EQ(check_allocation("t", make_gptr(2, seg_symmetric, *x), 64, a, nullptr), status::ok);
    EXPECT_EQ(check_allocation("t", make_gptr(2, seg_symmetric, *x), 512, a, nullptr), status::out_of_bounds);
    EXPECT_NE(last_error().find("run 448 bytes past the end"), std::string::npos) << last_error();
    EXPECT_NE(last_error().find("rank 2"), std::string::npos) << last_error();
    EXPECT_EQ(check_allocation("t", make_gptr(2, seg_symmetric, *y + 8), 8, a, nullptr), status::out_of_bounds);
    EXPECT_NE(last_error().find("not inside a live allocation"), std::string::npos) << last_error();
}

TEST(Segment, CreateAttachShareAndUnlink) {
    const std::string prefix = shm_name("unittest" + std::to_string(getpid()), 0, 0);
    auto a = host_mapping::create(prefix, 1 << 16);
    ASSERT_TRUE(a.ok()) << last_error();
    const std::string name = a->name();
    auto dup = host_mapping::create(prefix, 1 << 16);
    ASSERT_TRUE(dup.ok()) << last_error();
    EXPECT_NE(dup->name(), name);  // names are never reused: each gets its own random part
    auto b = host_mapping::attach(name, 1 << 16);
    ASSERT_TRUE(b.ok()) << last_error();
    std::strcpy(static_cast<char *>(a->base()), "shared");
    EXPECT_STREQ(static_cast<char *>(b->base()), "shared");
    EXPECT_EQ(host_mapping::attach(name, 1 << 20).error(), status::bootstrap);  // larger than it is
    a->unlink();
    EXPECT_EQ(host_mapping::attach(name, 1 << 16).error(), status::bootstrap);  // gone from /dev/shm
    EXPECT_STREQ(static_cast<char *>(b->base()), "shared");                   // mappings stay valid
}

// Another local user who pre-created hgas-<job>-<rank>-<seg> (the job id is visible) made every
// job fail with "File exists": the name must not be derivable from the job id, a squatted
// name must not block, and the file must be private to this user.
TEST(Segment, ShmNamePredictableFromJobIdIsNotUsed) {
    const std::string job = "squat" + std::to_string(getpid());
    const std::string prefix = shm_name(job, 0, 0);
    // What another user would pre-create: the old name, and the prefix with common endings.
    std::vector<std::string> squatted = {prefix, prefix + "-0", prefix + "-1", prefix + "-0000000000000000"};
    for (const auto &n : squatted) {
        int fd = shm_open(n.c_str(), O_CREAT | O_EXCL | O_RDWR, 0644);
        ASSERT_GE(fd, 0) << n << ": " << std::strerror(errno);
        close(fd);
    }
    auto a = host_mapping::create(prefix, 4096);
    ASSERT_TRUE(a.ok()) << last_error();
    auto b = host_mapping::create(prefix, 4096);
    ASSERT_TRUE(b.ok()) << last_error();
    for (const auto &n : squatted) {
        EXPECT_NE(a->name(), n);
        shm_unlink(n.c_str());
    }
    // prefix-<16 hex digits>, different each time: 64 bits no other process can guess.
    for (const host_mapping *m : {&*a, &*b}) {
        ASSERT_EQ(m->name().size(), prefix.size() + 17) << m->name();
        EXPECT_EQ(m->name().compare(0, prefix.size() + 1, prefix + "-"), 0) << m->name();
        EXPECT_EQ(m->name().find_first_not_of("0123456789abcdef", prefix.size() + 1), std::string::npos);
    }
    EXPECT_NE(a->name(), b->name());
    // Mode 0600 whatever the umask.
    const mode_t old = umask(0277);
    auto c = host_mapping::create(prefix, 4096);
    umask(old);
    ASSERT_TRUE(c.ok()) << last_error();
    struct stat st;
    ASSERT_EQ(stat(("/dev/shm" + c->name()).c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u);
    EXPECT_EQ(st.st_uid, getuid());
}

// Every rank reserved its whole heaps in /dev/shm at init (posix_fallocate: ~88 MB a rank at
// the default sizes, so 256 ranks did not fit in 24 GB). A segment is now sparse: it takes
// pages for what the allocator hands out (commit) and nothing else.
// UCX maps a heap over its placement hint with MAP_FIXED. A hint that was only free address
// space let two rank threads get the same heap (both took the hint before either mapped); a
// reservation keeps the hint's address space ours until the allocator has mapped.
TEST(Segment, PlacementHintStaysReservedUntilKept) {
    const size_t size = 8u << 20;
    hgas::mem::aligned_reservation hold(size);
    ASSERT_NE(hold.at(), nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(hold.at()) % hgas::mem::base_alignment(size), 0u);
    // Another thread asking for that address without MAP_FIXED is placed elsewhere.
    void *other = mmap(hold.at(), size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(other, MAP_FAILED);
    EXPECT_NE(other, hold.at());
    munmap(other, size);
    // The allocator maps over the hint (as UCX does); keep() leaves that mapping alone and
    // frees the reservation's rest: the pages just past it can be mapped at their address.
    void *heap = mmap(hold.at(), size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    ASSERT_EQ(heap, hold.at());
    hold.keep(heap, size);
    static_cast<char *>(heap)[size - 1] = 1;  // still mapped
    char *past = static_cast<char *>(heap) + size;
    void *next = mmap(past, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(next, MAP_FAILED);
    EXPECT_EQ(next, past) << "the reservation past the heap was not freed";
    munmap(next, 4096);
    munmap(heap, size);
}

// An allocator that put the memory elsewhere: the whole reservation goes.
TEST(Segment, ReservationNotKeptIsFreed) {
    void *at;
    {
        hgas::mem::aligned_reservation hold(1u << 20);
        at = hold.at();
        ASSERT_NE(at, nullptr);
        hold.keep(static_cast<char *>(at) + 4096, 4096);  // not at(): nothing kept
    }
    void *again = mmap(at, 1u << 20, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(again, MAP_FAILED);
    EXPECT_EQ(again, at);
    munmap(again, 1u << 20);
}

TEST(Segment, HeapIsSparseUntilTheAllocatorCommits) {
    const size_t size = 64u << 20;
    auto a = host_mapping::create(shm_name("sparse" + std::to_string(getpid()), 0, 0), size);
    ASSERT_TRUE(a.ok()) << last_error();
    auto resident = [&] {  // bytes of /dev/shm the segment holds
        int fd = shm_open(a->name().c_str(), O_RDONLY, 0);
        struct stat st{};
        EXPECT_EQ(fstat(fd, &st), 0);
        close(fd);
        return uint64_t(st.st_blocks) * 512;
    };
    EXPECT_EQ(resident(), 0u);
    EXPECT_EQ(static_cast<char *>(a->base())[size - 1], 0);  // reads as zeros (a read takes no page here)
    allocator heap(size);
    heap.set_commit([&](uint64_t off, uint64_t n) { return a->commit(off, n); });
    auto x = heap.allocate(3u << 20, 64);
    ASSERT_TRUE(x.ok()) << last_error();
    EXPECT_EQ(a->committed(), 3u << 20);
    EXPECT_GE(resident(), 3u << 20);
    EXPECT_LE(resident(), 4u << 20);
    auto y = heap.allocate(100, 64);  // inside a granule committed already: no new pages
    ASSERT_TRUE(y.ok());
    EXPECT_EQ(a->committed(), 4u << 20);
    auto z = heap.allocate(1000, 64, false);  // the runtime's sparse areas: nothing reserved
    ASSERT_TRUE(z.ok());
    EXPECT_EQ(a->committed(), 4u << 20);
}

// A full /dev/shm is an allocation error that names /dev/shm, and the block is not handed out.
TEST(Segment, CommitFailureFailsTheAllocationAndNamesDevShm) {
    allocator heap(8u << 20);
    heap.set_commit([](uint64_t, uint64_t n) {
        return fail(status::no_memory, "cannot reserve %llu bytes of /dev/shm (test)", (unsigned long long)n);
    });
    auto x = heap.allocate(4096, 64);
    EXPECT_EQ(x.error(), status::no_memory);
    EXPECT_TRUE(heap.commit_failed());
    EXPECT_NE(last_error().find("/dev/shm"), std::string::npos) << last_error();
    EXPECT_EQ(heap.in_use(), 0u);
    EXPECT_EQ(heap.largest_free(), 8u << 20);  // nothing leaked
    heap.set_commit(nullptr);
    ASSERT_TRUE(heap.allocate(4096, 64).ok());
    EXPECT_FALSE(heap.commit_failed());
}

// A touch that /dev/shm cannot back is a SIGBUS; the handler's message names the segment,
// /dev/shm and what to change (the default would die saying only "Bus error").
TEST(Segment, SigbusInASegmentIsExplained) {
    auto a = host_mapping::create(shm_name("bus" + std::to_string(getpid()), 0, 0), 1 << 20);
    ASSERT_TRUE(a.ok()) << last_error();
    const char *p = static_cast<char *>(a->base()) + 4096;
    const std::string msg = shm_guard_message(p);
    EXPECT_NE(msg.find(a->name()), std::string::npos) << msg;
    EXPECT_NE(msg.find("/dev/shm is full"), std::string::npos) << msg;
    EXPECT_NE(msg.find("offset 4096"), std::string::npos) << msg;
    EXPECT_EQ(shm_guard_message(&msg), "");  // not a segment: not ours to explain
    // The real thing, in a child: a segment whose file was truncated below the mapping faults
    // like a page /dev/shm cannot back, and the child dies of SIGBUS after printing why.
    EXPECT_EXIT(
        {
            int fd = shm_open(a->name().c_str(), O_RDWR, 0);
            if (fd < 0 || ftruncate(fd, 0) != 0) _exit(3);
            *(volatile char *)p = 1;
        },
        ::testing::KilledBySignal(SIGBUS), "SIGBUS at 0x[0-9a-f]+ in shared memory .*/dev/shm is full");
}
