// Transports through their interface (self and shm; UCX has test_ucx_transport.cpp), the
// router, and the progress engine's helper thread.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>
#include <string>
#include <vector>

#include "core/gpu_funnel.hpp"
#include "mem/segment.hpp"
#include "progress/engine.hpp"
#include "proto/router.hpp"
#include "proto/staging.hpp"
#include "transport/transport.hpp"

using namespace hgas;
using namespace hgas::transport;

namespace {

struct direct_fixture {
    boot::job_info job;
    boot::topology topo;
    settings cfg;
    std::vector<char> seg = std::vector<char>(4096, 0);
    direct_fixture() {
        job.rank = 0;
        job.size = 1;
        topo = boot::topology::from_node_names({"n0"}, 0);
    }
};

void exercise(transport::transport &t, char *base) {
    const remote r{0, 0, 64};
    const char msg[] = "hello, segment";
    ASSERT_EQ(t.put(r, msg, sizeof msg, false), status::ok);
    EXPECT_STREQ(base + 64, msg);
    char back[sizeof msg] = {};
    ASSERT_EQ(t.get(back, r, sizeof msg, true), status::ok);
    ASSERT_EQ(t.quiet(), status::ok);
    EXPECT_STREQ(back, msg);
    pending p;
    bool done = false;
    ASSERT_EQ(t.put_nb(r, "xy", 2, p), status::ok);
    ASSERT_EQ(t.test(p, done), status::ok);
    EXPECT_TRUE(done);
    uint64_t old = 0;
    const remote w{0, 0, 1024};
    ASSERT_EQ(t.amo(w, amo_op::set, 8, 40, 0, nullptr), status::ok);
    ASSERT_EQ(t.amo(w, amo_op::fetch_add, 8, 2, 0, &old), status::ok);
    EXPECT_EQ(old, 40u);
    ASSERT_EQ(t.amo(w, amo_op::compare_swap, 8, 7, 42, &old), status::ok);
    EXPECT_EQ(old, 42u);
    ASSERT_EQ(t.amo(w, amo_op::fetch_xor, 4, 1, 0, &old), status::ok);
    EXPECT_EQ(old, 7u);
    uint64_t v;
    std::memcpy(&v, base + 1024, 8);
    EXPECT_EQ(v, 6u);
    const remote sig{0, 0, 2048};
    ASSERT_EQ(t.put_signal(r, "signal!", 8, sig, signal_op::add, 5, false), status::ok);
    ASSERT_EQ(t.put_signal(r, "signal!", 8, sig, signal_op::add, 5, false), status::ok);
    std::memcpy(&v, base + 2048, 8);
    EXPECT_EQ(v, 10u);
    EXPECT_STREQ(base + 64, "signal!");
    EXPECT_EQ(t.fence(), status::ok);
}

}  // namespace

TEST(DirectTransports, SelfThroughTheInterface) {
    direct_fixture f;
    auto t = create_self();
    setup s{&f.cfg, &f.job, &f.topo, nullptr, false, {}, {}};
    ASSERT_EQ(t->connect(s), status::ok);
    EXPECT_TRUE(t->can_reach(0));
    EXPECT_FALSE(t->can_reach(1));
    std::string blob;
    ASSERT_EQ(t->register_segment({0, f.seg.data(), f.seg.size(), ""}, blob), status::ok);
    EXPECT_EQ(t->peer_base(0, 0), f.seg.data());
    EXPECT_EQ(t->peer_base(0, 1), nullptr);
    exercise(*t, f.seg.data());
    t->shutdown();
}

TEST(DirectTransports, ShmMapsAPeerSegmentByName) {
    direct_fixture f;
    f.job.size = 2;
    f.topo = boot::topology::from_node_names({"n0", "n0"}, 0);
    const std::string name = mem::shm_name("layers" + std::to_string(getpid()), 1, 0);
    auto peer = mem::host_mapping::create(name, 4096);  // rank 1's segment
    ASSERT_TRUE(peer.ok()) << last_error();
    auto t = create_shm();
    setup s{&f.cfg, &f.job, &f.topo, nullptr, false, {}, {}};
    ASSERT_EQ(t->connect(s), status::ok);
    EXPECT_TRUE(t->can_reach(1));
    ASSERT_EQ(t->attach_segment(1, 0, 4096, peer->name()), status::ok);  // the name as exchanged
    ASSERT_NE(t->peer_base(1, 0), nullptr);
    const remote r{1, 0, 100};
    ASSERT_EQ(t->put(r, "across", 7, false), status::ok);
    EXPECT_STREQ(static_cast<char *>(peer->base()) + 100, "across");  // seen through rank 1's mapping
    EXPECT_NE(t->attach_segment(1, 1, 4096, "/hgas-no-such-segment"), status::ok);
    t->shutdown();
    // other nodes are not shm's business
    f.topo = boot::topology::from_node_names({"n0", "n1"}, 0);
    auto t2 = create_shm();
    ASSERT_EQ(t2->connect(s), status::ok);
    EXPECT_FALSE(t2->can_reach(1));
}

// HGAS_PEER_ATTACH=lazy: a peer maps a segment at its first use, long after the owner dropped
// the name, through the descriptor the owner keeps open; a blob whose file is no longer the
// one announced (the owner exited and another file took its descriptor number) is refused.
TEST(DirectTransports, ShmMapsAPeerSegmentThroughItsDescriptorAfterTheNameIsGone) {
    direct_fixture f;
    f.job.size = 2;
    f.topo = boot::topology::from_node_names({"n0", "n0"}, 1);
    f.job.rank = 1;
    const std::string name = mem::shm_name("lazy" + std::to_string(getpid()), 1, 0);
    auto own = mem::host_mapping::create(name, 8192);  // rank 1's segment
    ASSERT_TRUE(own.ok()) << last_error();
    auto owner = create_shm();
    setup s1{&f.cfg, &f.job, &f.topo, nullptr, false, {}, {}};
    ASSERT_EQ(owner->connect(s1), status::ok);
    std::string blob;
    ASSERT_EQ(owner->register_segment(local_segment{0, own->base(), 8192, own->name(), own->fd()}, blob), status::ok);
    own->unlink();  // as after init: no name left in /dev/shm

    boot::job_info j0 = f.job;
    j0.rank = 0;
    boot::topology t0 = boot::topology::from_node_names({"n0", "n0"}, 0);
    setup s0{&f.cfg, &j0, &t0, nullptr, false, {}, {}};
    auto t = create_shm();
    ASSERT_EQ(t->connect(s0), status::ok);
    ASSERT_TRUE(t->attaches_lazily());  // the default
    ASSERT_EQ(t->attach_segment(1, 0, 8192, blob), status::ok) << last_error();
    ASSERT_NE(t->peer_base(1, 0), nullptr);
    ASSERT_EQ(t->put(remote{1, 0, 4100}, "late", 5, false), status::ok);
    EXPECT_STREQ(static_cast<char *>(own->base()) + 4100, "late");  // the owner's own mapping sees it

    // The same blob with another inode: refused, naming the file.
    std::string wrong = blob;
    const size_t last = wrong.rfind(' '), ino_at = wrong.rfind(' ', last - 1) + 1;
    wrong.replace(ino_at, last - ino_at, "1");
    auto t2 = create_shm();
    ASSERT_EQ(t2->connect(s0), status::ok);
    EXPECT_EQ(t2->attach_segment(1, 0, 8192, wrong), status::peer_failed);
    EXPECT_NE(last_error().find("no longer shared memory " + own->name()), std::string::npos) << last_error();
    EXPECT_EQ(t2->peer_base(1, 0), nullptr);
    EXPECT_NE(t2->put(remote{1, 0, 0}, "x", 1, false), status::ok);  // not mapped: an error, not a crash
    t->shutdown();
    t2->shutdown();
    owner->shutdown();
}

// The streaming copy of large puts and gets (HGAS_SHM_NT_MIN): every byte of every length up
// to a few lines, at every destination and source misalignment within a line, and nothing
// around the destination touched.
TEST(DirectTransports, StreamingCopyEveryLengthAndAlignment) {
    std::vector<unsigned char> src(4096 + 128), dst(4096 + 256);
    for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<unsigned char>(i * 7 + 3);
    for (size_t n : {size_t{0}, size_t{1}, size_t{15}, size_t{63}, size_t{64}, size_t{65}, size_t{127}, size_t{200},
                     size_t{1000}, size_t{4096}})
        for (size_t da = 0; da < 64; da += 5)
            for (size_t sa : {size_t{0}, size_t{1}, size_t{16}, size_t{33}}) {
                std::memset(dst.data(), 0xEE, dst.size());
                unsigned char *d = dst.data() + 64 + da;
                direct::copy_nt(d, src.data() + sa, n);
                ASSERT_EQ(std::memcmp(d, src.data() + sa, n), 0) << n << " bytes, dst +" << da << ", src +" << sa;
                for (unsigned char *p = dst.data(); p < d; ++p) ASSERT_EQ(*p, 0xEE) << "before, " << n << " bytes";
                for (unsigned char *p = d + n; p < dst.data() + dst.size(); ++p)
                    ASSERT_EQ(*p, 0xEE) << "after, " << n << " bytes";
            }
}

TEST(DirectTransports, StreamingCopyThresholdFromTheSetting) {
    direct::set_copy_nt_min(123456);
    EXPECT_EQ(direct::copy_nt_min.load(), 123456u);
    direct::set_copy_nt_min(0);  // the core's L2 size, or 2 MiB
    const long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    EXPECT_EQ(direct::copy_nt_min.load(), l2 > 0 ? static_cast<size_t>(l2) : size_t{2} << 20);
}

TEST(Router, FirstTransportThatReachesAPeer) {
    direct_fixture f;
    f.job.size = 3;
    f.topo = boot::topology::from_node_names({"a", "a", "b"}, 0);
    setup s{&f.cfg, &f.job, &f.topo, nullptr, false, {}, {}};
    auto self = create_self(), shm = create_shm();
    ASSERT_EQ(self->connect(s), status::ok);
    ASSERT_EQ(shm->connect(s), status::ok);
    proto::router r;
    EXPECT_EQ(r.build({self.get(), shm.get()}, 3, 0, f.topo), status::unsupported);  // rank 2 is on node b
    EXPECT_NE(last_error().find("rank 2"), std::string::npos) << last_error();
    f.topo = boot::topology::from_node_names({"a", "a", "a"}, 0);
    ASSERT_EQ(r.build({self.get(), shm.get()}, 3, 0, f.topo), status::ok);
    EXPECT_STREQ(r.route(0)->name(), "self");
    EXPECT_STREQ(r.route(1)->name(), "shm");
    EXPECT_EQ(r.locality_of(1), proto::locality::same_node);
    EXPECT_EQ(proto::planned_path({"self", "shm", "ucx"}, proto::locality::other_node, true), "ucx");
    EXPECT_EQ(proto::planned_path({"self", "shm"}, proto::locality::other_node, true), "");
    EXPECT_EQ(proto::planned_path({"ucx"}, proto::locality::same_process, true), "ucx");
    EXPECT_EQ(proto::planned_path({"shm"}, proto::locality::same_process, false), "shm");
}

namespace {
// A transport that only counts progress calls and says it needs target progress.
class counting_transport final : public transport::transport {
public:
    std::atomic<int> polls{0};
    std::atomic<bool> busy{false};  // serving(): a transfer for a peer under way
    bool serving() const override { return busy.load(); }
    const char *name() const override { return "counting"; }
    caps capabilities() const override { return {false, true, 1, 1}; }
    status connect(const setup &) override { return status::ok; }
    bool can_reach(int) const override { return true; }
    status register_segment(const local_segment &, std::string &) override { return status::ok; }
    status attach_segment(int, uint16_t, uint64_t, const std::string &) override { return status::ok; }
    void shutdown() override {}
    status put(remote, const void *, size_t, bool) override { return status::unsupported; }
    status get(void *, remote, size_t, bool) override { return status::unsupported; }
    status put_nb(remote, const void *, size_t, pending &) override { return status::unsupported; }
    status get_nb(void *, remote, size_t, pending &) override { return status::unsupported; }
    status test(pending &, bool &) override { return status::unsupported; }
    status amo(remote, amo_op, unsigned, uint64_t, uint64_t, uint64_t *) override { return status::unsupported; }
    status put_signal(remote, const void *, size_t, remote, signal_op, uint64_t, bool) override {
        return status::unsupported;
    }
    status fence() override { return status::ok; }
    status quiet() override { return status::ok; }
    status progress() override {
        polls.fetch_add(1);
        return status::ok;
    }
    uint64_t progressed() const override { return events.load(); }
    std::atomic<uint64_t> events{0};  // what the test says progress() completed
};
}  // namespace

TEST(ProgressEngine, HelperThreadPollsOnlyTransportsThatNeedIt) {
    counting_transport c;
    auto self = create_self();
    progress::engine e;
    e.set_transports({self.get(), &c});
    ASSERT_EQ(e.poll(), status::ok);
    EXPECT_EQ(c.polls.load(), 1);
    e.start_helper(10, 0, 0);
    ASSERT_TRUE(e.helper_running());
    for (int i = 0; i < 500 && c.polls.load() < 20; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    EXPECT_GE(c.polls.load(), 20) << "the helper thread does not poll";
    e.stop_helper();
    EXPECT_FALSE(e.helper_running());
    const int after = c.polls.load();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_EQ(c.polls.load(), after);  // stopped means stopped
    progress::engine idle;  // nothing needs polling: no thread at all
    idle.set_transports({self.get()});
    idle.start_helper(0, 0, 0);
    EXPECT_FALSE(idle.helper_running());
}

// The helper sleeps between idle polls, but not while peers keep it busy: a request that
// follows another within the spin window is served at once, not after the rest of a sleep.
// Work is what a polled transport reports (its event count) or what a poller notes.
TEST(ProgressEngine, HelperPollsWithoutSleepingWhileWorkComesIn) {
    counting_transport c;
    progress::engine e;
    e.set_transports({&c});
    e.start_helper(100000 /* 100 ms sleeps */, 2000000 /* 2 s spin window */, 0);
    ASSERT_TRUE(e.helper_running());
    // 1 s of work reported every 2 ms, half from the transport, half noted by a poller.
    for (int i = 0; i < 500; ++i) {
        if (i % 2) c.events.fetch_add(1);
        else e.note_work();
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    EXPECT_EQ(e.helper_sleeps(), 0u) << "the helper slept while work came in every 2 ms";
    EXPECT_GT(c.polls.load(), 100) << "the helper did not keep polling";
    // Quiet: after the spin window it sleeps, and then polls about once per 100 ms.
    for (int i = 0; i < 1000 && e.helper_sleeps() < 2; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    ASSERT_GE(e.helper_sleeps(), 2u) << "the helper never went to sleep once the peers were quiet";
    const int before = c.polls.load();
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    EXPECT_LE(c.polls.load() - before, 5) << "the helper polled without sleeping while nothing came in";
    // Work again: it wakes at the end of its sleep and spins again.
    const uint64_t sleeps = e.helper_sleeps();
    for (int i = 0; i < 250; ++i) {
        c.events.fetch_add(1);
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    EXPECT_LE(e.helper_sleeps(), sleeps + 1) << "the helper went back to sleep while work came in";
    e.stop_helper();
}

// A transport in the middle of serving a peer (a rendezvous transfer: nothing counts as served
// until it lands) keeps the helper polling past its spin window; once it is done the helper
// goes back to sleep.
TEST(ProgressEngine, HelperStaysAwakeWhileATransportServes) {
    counting_transport c;
    progress::engine e;
    e.set_transports({&c});
    c.busy = true;
    e.start_helper(100000 /* 100 ms sleeps */, 1000 /* 1 ms spin window */, 0);
    ASSERT_TRUE(e.helper_running());
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    EXPECT_EQ(e.helper_sleeps(), 0u) << "the helper slept while a transfer for a peer was under way";
    EXPECT_GT(c.polls.load(), 50) << "the helper did not keep polling";
    c.busy = false;
    for (int i = 0; i < 1000 && e.helper_sleeps() < 1; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    EXPECT_GE(e.helper_sleeps(), 1u) << "the helper never slept once the transfer was done";
    e.stop_helper();
}

// While the rank's own thread polls (a wait), the helper leaves the transports to it: two
// threads progressing one UCX worker take turns on its lock. Once the rank stops polling (it
// computes), the helper polls again at once.
TEST(ProgressEngine, HelperStandsBackWhileTheRankPolls) {
    counting_transport c;
    progress::engine e;
    e.set_transports({&c});
    e.start_helper(0 /* never sleeps */, 0, 0);
    ASSERT_TRUE(e.helper_running());
    for (int i = 0; i < 500 && c.polls.load() < 20; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    ASSERT_GE(c.polls.load(), 20) << "the helper does not poll while the rank computes";
    // The rank waits: back-to-back polls until the helper has stood back 100 times (how often
    // it gets to look depends on the scheduler; a loaded machine may deschedule either thread).
    const uint64_t yields0 = e.helper_yields();
    for (auto end = std::chrono::steady_clock::now() + std::chrono::seconds(20);
         e.helper_yields() < yields0 + 100 && std::chrono::steady_clock::now() < end;)
        ASSERT_EQ(e.poll(), status::ok);
    EXPECT_GE(e.helper_yields(), yields0 + 100) << "the helper did not stand back while the rank polled";
    // The rank computes again: the helper polls, and (once it has seen the rank's last poll)
    // never stands back.
    const int polls1 = c.polls.load();
    for (int i = 0; i < 5000 && c.polls.load() < polls1 + 1; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    const uint64_t yields1 = e.helper_yields();
    for (int i = 0; i < 5000 && c.polls.load() < polls1 + 20; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    EXPECT_GE(c.polls.load(), polls1 + 20) << "the helper did not go back to polling";
    EXPECT_EQ(e.helper_yields(), yields1) << "the helper stood back while nobody else polled";
    e.stop_helper();
}

// Layers add pollers while the helper thread runs (the message layer right after init, the
// device proxy at its first use). The helper must see each one whole and never walk a list
// that is being reallocated (it once did: a rank died of SIGSEGV). Each added poller runs on
// the helper; the ninth is refused with a message, the others keep running.
TEST(ProgressEngine, PollersAddedWhileTheHelperRuns) {
    progress::engine e;
    std::atomic<int> runs[8];
    for (auto &r : runs) r.store(0);
    ASSERT_EQ(e.add_poller([&](bool on_rank) { runs[0].fetch_add(on_rank ? 0 : 1); return status::ok; }), status::ok);
    e.start_helper(0, 0, 0);  // spinning: as many walks of the list as possible while we add
    ASSERT_TRUE(e.helper_running());
    for (int k = 1; k < 8; ++k) {
        // A capture larger than std::function's small buffer: the entry is a heap object, so
        // an entry seen half-written or freed would crash or run the wrong one.
        std::string tag(64, static_cast<char>('a' + k));
        ASSERT_EQ(e.add_poller([&runs, k, tag](bool on_rank) {
            if (!on_rank && tag.size() == 64 && tag[0] == 'a' + k) runs[k].fetch_add(1);
            return status::ok;
        }), status::ok);
        std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    for (int i = 0; i < 20000; ++i) {  // up to 20 s: a loaded machine may keep the helper off a CPU
        bool all = true;
        for (auto &r : runs) all = all && r.load() > 0;
        if (all) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    for (int k = 0; k < 8; ++k) EXPECT_GT(runs[k].load(), 0) << "poller " << k << " never ran on the helper";
    EXPECT_EQ(e.add_poller([](bool) { return status::ok; }), status::internal);
    EXPECT_NE(last_error().find("more than 8 pollers"), std::string::npos) << last_error();
    e.stop_helper();
    ASSERT_EQ(e.poll(), status::ok);
}

// The staging rings' size against the number of ranks (proto::staging::plan): whole while they
// fit the budget, then smaller chunks (to 64K), fewer slots (to 4), smaller chunks (to 4K),
// fewer slots (to 2); what the user set stays.
TEST(StagingPlan, RingsShrinkWithRanksWithinTheBudget) {
    const uint64_t budget = 24 << 20, k = 1024;
    auto p = proto::staging::plan(8, 256 * k, 8, budget, false, false);
    EXPECT_EQ(p.chunk, 256 * k);
    EXPECT_EQ(p.slots, 8);
    EXPECT_FALSE(p.shrunk);
    EXPECT_EQ(p.bytes, proto::staging::area_bytes(8, 256 * k, 8));
    for (int n : {32, 64, 128, 256, 1024}) {
        p = proto::staging::plan(n, 256 * k, 8, budget, false, false);
        EXPECT_TRUE(p.shrunk);
        EXPECT_LE(p.bytes, budget) << n << " ranks";
        EXPECT_EQ(p.bytes, proto::staging::area_bytes(n, p.chunk, p.slots));
        EXPECT_EQ(p.chunk % 64, 0u);
    }
    p = proto::staging::plan(32, 256 * k, 8, budget, false, false);  // the chunk goes first
    EXPECT_EQ(p.chunk, 64 * k);
    EXPECT_EQ(p.slots, 8);
    p = proto::staging::plan(64, 256 * k, 8, budget, false, false);  // then the slots
    EXPECT_EQ(p.chunk, 64 * k);
    EXPECT_EQ(p.slots, 5);
    p = proto::staging::plan(256, 256 * k, 8, budget, false, false);  // then the chunk again
    EXPECT_EQ(p.slots, 4);
    EXPECT_EQ(p.chunk, 16 * k);
    p = proto::staging::plan(4096, 256 * k, 8, budget, false, false);  // the floor: may not fit
    EXPECT_EQ(p.slots, 2);
    EXPECT_EQ(p.chunk, 4 * k);
    p = proto::staging::plan(64, 256 * k, 8, budget, true, false);  // a chunk the user set stays
    EXPECT_EQ(p.chunk, 256 * k);
    EXPECT_EQ(p.slots, 2);
    EXPECT_GT(p.bytes, budget);
    p = proto::staging::plan(64, 256 * k, 8, budget, true, true);
    EXPECT_EQ(p.slots, 8);
    EXPECT_FALSE(p.shrunk);
}

// Funneled rank threads (HGAS_GPU_SHARING=funneled): an operation handed to the process's funnel
// thread that does not come back within HGAS_TIMEOUT ends the process with a message naming the
// rank and what the funnel thread is stuck in -- not a wait without end (a job's funnel thread
// stuck in a GPU call once hung a test for its whole 300 s with no word).
namespace {
class stuck_device final : public hgas::gpu::device {
public:
    hgas::gpu::kind which() const override { return hgas::gpu::kind::sim; }
    std::string describe() const override { return "stuck"; }
    int ordinal() const override { return 0; }
    int streams() const override { return 1; }
    hgas::result<void *> alloc_segment(uint16_t, size_t, std::string &) override { return hgas::status::unsupported; }
    hgas::result<void *> map_peer(int, const std::string &, size_t) override { return hgas::status::unsupported; }
    bool owns(const void *, size_t) override { return false; }
    hgas::result<hgas::gpu::ticket> copy_async(void *, const void *, size_t n, int, bool) override {
        if (n == 1) for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));  // a GPU call that never returns
        return hgas::gpu::ticket{0, 1};
    }
    hgas::result<hgas::gpu::ticket> mark(int) override { return hgas::gpu::ticket{0, 1}; }
    hgas::result<bool> test(hgas::gpu::ticket) override { return true; }
    hgas::result<uint64_t> amo(void *, hgas::amo_op, unsigned, uint64_t, uint64_t) override { return uint64_t{7}; }
    hgas::result<void *> alloc_pinned(size_t) override { return hgas::status::unsupported; }
    void free_pinned(void *) override {}
    hgas::status register_host(void *, size_t) override { return hgas::status::ok; }
    void unregister_host(void *) override {}
};
}  // namespace

TEST(GpuFunnel, OperationsPassThroughAndAStuckOneEndsTheProcess) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    {
        auto d = hgas::core::funnel_device(std::make_unique<stuck_device>(), 3, 5.0);
        char a = 0, b = 0;
        auto t = d->copy_async(&a, &b, 2, 0, true);  // not stuck: handed off and back
        ASSERT_TRUE(t.ok());
        EXPECT_EQ(t->seq, 1u);
        auto v = d->amo(&a, hgas::amo_op{}, 8, 0, 0);
        ASSERT_TRUE(v.ok());
        EXPECT_EQ(*v, 7u);
    }
    auto stuck = [] {
        auto d = hgas::core::funnel_device(std::make_unique<stuck_device>(), 3, 0.3);
        char a = 0;
        char b = 0;
        (void)d->copy_async(&a, &b, 1, 0, true);
    };
    EXPECT_DEATH(stuck(),
        "rank 3: its GPU operation \\(a copy\\) waited 0.3 s for the process's GPU funnel thread.*still inside a copy");
}
