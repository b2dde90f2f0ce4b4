// Unit tests of src/boot: wire framing, the store with clients in threads, topology, detect().
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <future>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "base/clock.hpp"
#include "boot/boot.hpp"
#include "boot/wire.hpp"

using namespace hgas;
using namespace hgas::boot;

namespace {

// ---- wire -------------------------------------------------------------------------------

TEST(BootWire, RoundTripAcrossArbitrarySplits) {
    std::string big(100000, 'x');
    big[500] = '\0';  // fields are binary-safe
    std::vector<wire::message> sent = {{wire::msg::put, {"key", big}},
                                       {wire::msg::bye, {}},
                                       {wire::msg::hello, {"s3cret", "1", "4"}},
                                       {wire::msg::value, {"", ""}}};
    std::string stream;
    for (const auto &m : sent) stream += wire::encode(m);
    // Feed in pieces of 1, 2, 3, ... bytes: every frame boundary falls inside some piece.
    wire::frame_reader rd;
    std::vector<wire::message> got;
    std::string err;
    for (size_t pos = 0, step = 1; pos < stream.size(); pos += step, step = step % 7 + 1) {
        rd.append(stream.data() + pos, std::min(step, stream.size() - pos));
        wire::message m;
        int rc;
        while ((rc = rd.next(m, err)) == 1) got.push_back(m);
        ASSERT_EQ(rc, 0) << err;
    }
    ASSERT_EQ(got.size(), sent.size());
    for (size_t i = 0; i < sent.size(); ++i) {
        EXPECT_EQ(got[i].type, sent[i].type);
        EXPECT_EQ(got[i].fields, sent[i].fields);
    }
    EXPECT_EQ(rd.buffered(), 0u);
}

TEST(BootWire, RejectsMalformedFrames) {
    std::string err;
    wire::message m;
    {
        wire::frame_reader rd;
        const char huge[] = {0x7f, 0, 0, 0, 1};
        rd.append(huge, sizeof huge);
        EXPECT_EQ(rd.next(m, err), -1);
        EXPECT_NE(err.find("frame length"), std::string::npos) << err;
    }
    {
        wire::frame_reader rd;  // a hello frame over the pre-hello limit
        std::string f = wire::encode({wire::msg::hello, {std::string(5000, 's'), "0", "1"}});
        rd.append(f.data(), f.size());
        EXPECT_EQ(rd.next(m, err, wire::hello_frame_limit), -1);
    }
    {
        wire::frame_reader rd;
        const char unknown[] = {0, 0, 0, 1, 99};
        rd.append(unknown, sizeof unknown);
        EXPECT_EQ(rd.next(m, err), -1);
        EXPECT_NE(err.find("unknown message type 99"), std::string::npos) << err;
    }
    {
        wire::frame_reader rd;  // a field that claims more bytes than its frame has
        const char bad[] = {0, 0, 0, 6, 4, 0, 0, 0, 9, 'a'};
        rd.append(bad, sizeof bad);
        EXPECT_EQ(rd.next(m, err), -1);
    }
}

TEST(BootWire, Addresses) {
    wire::address a;
    ASSERT_EQ(wire::parse_address("unix:/tmp/x.sock", a), status::ok);
    EXPECT_TRUE(a.is_unix);
    EXPECT_EQ(a.path, "/tmp/x.sock");
    ASSERT_EQ(wire::parse_address("tcp:node1:29500", a), status::ok);
    EXPECT_EQ(a.host, "node1");
    EXPECT_EQ(a.port, "29500");
    ASSERT_EQ(wire::parse_address("tcp:127.0.0.1", a), status::ok);
    EXPECT_EQ(a.port, "0");
    ASSERT_EQ(wire::parse_address("tcp:[::1]:80", a), status::ok);
    EXPECT_EQ(a.host, "::1");
    EXPECT_EQ(a.port, "80");
    EXPECT_EQ(wire::parse_address("unix:relative", a), status::bootstrap);
    EXPECT_EQ(wire::parse_address("tcp:host:99999", a), status::bootstrap);
    EXPECT_EQ(wire::parse_address("http://x", a), status::bootstrap);
    EXPECT_NE(last_error().find("HGAS_BOOT_ADDR"), std::string::npos) << last_error();
}

TEST(BootWire, Helpers) {
    EXPECT_TRUE(wire::secret_equal("abc", "abc"));
    EXPECT_FALSE(wire::secret_equal("abc", "abd"));
    EXPECT_FALSE(wire::secret_equal("abc", "abcd"));
    EXPECT_FALSE(wire::secret_equal("", "a"));
    EXPECT_EQ(wire::describe_ranks({3}), "rank 3");
    EXPECT_EQ(wire::describe_ranks({1, 4, 5, 6, 9, 10}), "ranks 1, 4-6, 9, 10");
    EXPECT_EQ(wire::split_ranks(wire::join_ranks({0, 7, 12})), (std::vector<int>{0, 7, 12}));
    EXPECT_TRUE(wire::split_ranks("").empty());
}

// ---- store and clients ------------------------------------------------------------------

class BootStore : public ::testing::Test {
protected:
    void SetUp() override {
        char tmpl[] = "/tmp/hgas-boot-test-XXXXXX";
        ASSERT_NE(mkdtemp(tmpl), nullptr);
        dir_ = tmpl;
    }
    void TearDown() override {
        if (server_) server_->stop();
        server_.reset();
        std::string cmd = "rm -rf '" + dir_ + "'";
        ASSERT_EQ(std::system(cmd.c_str()), 0);
    }
    void start(int n, const std::string &addr = "") {
        auto s = store_server::start(addr.empty() ? "unix:" + dir_ + "/store.sock" : addr, secret_, n);
        ASSERT_TRUE(s.ok()) << last_error();
        server_ = std::move(s.value());
    }
    job_info job(int rank, int size, const std::string &launcher = "hgasrun") {
        job_info j;
        j.rank = rank;
        j.size = size;
        j.addr = server_ ? server_->address() : "unix:" + dir_ + "/hosted.sock";
        j.secret = secret_;
        j.launcher = launcher;
        j.node_name = "n";
        j.job_id = "test";
        return j;
    }
    std::unique_ptr<client> join(int rank, int size) {
        auto c = client::connect(job(rank, size), 5.0);
        EXPECT_TRUE(c.ok()) << last_error();
        return c.ok() ? std::move(c.value()) : nullptr;
    }
    // Runs fn(rank) for every rank in its own thread and waits for all.
    template <class F>
    void each_rank(int n, F fn) {
        std::vector<std::thread> t;
        for (int r = 0; r < n; ++r) t.emplace_back(fn, r);
        for (auto &x : t) x.join();
    }

    std::string dir_, secret_ = random_secret();
    std::unique_ptr<store_server> server_;
};

TEST_F(BootStore, PutGetBarrierAllgather) {
    const int n = 4;
    start(n);
    each_rank(n, [&](int r) {
        auto c = join(r, n);
        ASSERT_TRUE(c);
        std::string v;
        if (r == 1) {  // asks before rank 0 puts: the store answers when the key appears
            ASSERT_EQ(c->get("greeting", v, 5.0), status::ok) << last_error();
            EXPECT_EQ(v, "hello from 0");
        }
        if (r == 0) {
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
            ASSERT_EQ(c->put("greeting", "hello from 0"), status::ok);
        }
        for (int i = 0; i < 3; ++i) ASSERT_EQ(c->barrier("b" + std::to_string(i), 5.0), status::ok) << last_error();
        std::vector<std::string> all;
        ASSERT_EQ(c->allgather("ag", "v" + std::to_string(r * 10), all, 5.0), status::ok) << last_error();
        EXPECT_EQ(all, (std::vector<std::string>{"v0", "v10", "v20", "v30"}));
        ASSERT_EQ(c->get("greeting", v, 5.0), status::ok);  // a second get of the same key
        EXPECT_EQ(v, "hello from 0");
        std::string why;
        EXPECT_FALSE(c->aborted(&why));
        EXPECT_EQ(c->finalize(), status::ok);
    });
    EXPECT_TRUE(server_->all_joined());
}

// Start-up at scale spent its time here: every rank fetched every value with its own GET, so
// an allgather cost the store n^2 replies (65536 at 256 ranks, three allgathers at init).
// The store now gathers: one VALUES reply per rank, whatever the order of arrival.
TEST_F(BootStore, AllgatherCostsTheStoreOneReplyPerRank) {
    const int n = 12;
    start(n);
    std::vector<std::unique_ptr<client>> clients(n);
    each_rank(n, [&](int r) {
        clients[r] = join(r, n);
        ASSERT_TRUE(clients[r]);
        ASSERT_EQ(clients[r]->barrier("joined", 5.0), status::ok) << last_error();
    });
    const uint64_t before = server_->frames_sent();
    each_rank(n, [&](int r) {
        // Late contributors: ranks put in reverse order of rank, some long after others asked.
        std::this_thread::sleep_for(std::chrono::milliseconds(3 * (n - r)));
        std::vector<std::string> all;
        ASSERT_EQ(clients[r]->allgather("ag", std::string(r + 1, char('a' + r)), all, 5.0), status::ok) << last_error();
        ASSERT_EQ(all.size(), size_t(n));
        for (int p = 0; p < n; ++p) EXPECT_EQ(all[p], std::string(p + 1, char('a' + p))) << "rank " << r;
    });
    EXPECT_EQ(server_->frames_sent() - before, uint64_t(n)) << "one reply per rank, not one per value";
    each_rank(n, [&](int r) { EXPECT_EQ(clients[r]->finalize(), status::ok); });
}

TEST_F(BootStore, SocketFileIsPrivateAndGoesOnceAllJoined) {
    start(2);
    struct stat st;
    const std::string path = dir_ + "/store.sock";
    ASSERT_EQ(stat(path.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u);
    auto c0 = join(0, 2);
    EXPECT_FALSE(server_->all_joined());
    auto c1 = join(1, 2);
    ASSERT_TRUE(c0 && c1);
    for (int i = 0; i < 100 && !server_->all_joined(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    EXPECT_TRUE(server_->all_joined());
    EXPECT_NE(stat(path.c_str(), &st), 0) << "the socket file should be unlinked once every rank joined";
}

TEST_F(BootStore, RejectsWrongSecretBadRankAndDuplicates) {
    start(2);
    job_info bad = job(0, 2);
    bad.secret = "not-the-secret";
    auto c = client::connect(bad, 2.0);
    ASSERT_FALSE(c.ok());
    EXPECT_EQ(c.error(), status::bootstrap);
    EXPECT_NE(last_error().find("wrong job secret"), std::string::npos) << last_error();

    auto out = client::connect(job(5, 2), 2.0);
    ASSERT_FALSE(out.ok());
    EXPECT_NE(last_error().find("rank 5 is outside this job of 2 ranks"), std::string::npos) << last_error();

    auto size = client::connect(job(1, 3), 2.0);
    ASSERT_FALSE(size.ok());
    EXPECT_NE(last_error().find("job size 3 differs"), std::string::npos) << last_error();

    auto first = join(0, 2);
    auto dup = client::connect(job(0, 2), 2.0);
    ASSERT_FALSE(dup.ok());
    EXPECT_NE(last_error().find("rank 0 already joined"), std::string::npos) << last_error();
    EXPECT_FALSE(server_->all_joined());
}

TEST_F(BootStore, GetTimeoutNamesTheKey) {
    start(1);
    auto c = join(0, 1);
    ASSERT_TRUE(c);
    std::string v = "unchanged";
    auto t0 = std::chrono::steady_clock::now();
    EXPECT_EQ(c->get("rank7/address", v, 0.3), status::timeout);
    EXPECT_GE(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(290));
    EXPECT_NE(last_error().find("'rank7/address'"), std::string::npos) << last_error();
    EXPECT_NE(last_error().find("0.3 s"), std::string::npos) << last_error();
    EXPECT_EQ(v, "unchanged");  // outputs are set only on success
}

TEST_F(BootStore, BarrierAndAllgatherTimeoutsNameMissingRanks) {
    const int n = 5;
    start(n);
    // ranks 0 and 1 arrive, rank 2 joins but stays away, ranks 3 and 4 never connect.
    auto c2 = join(2, n);
    std::vector<std::string> msgs(2), ag(2);
    each_rank(2, [&](int r) {
        auto c = join(r, n);
        ASSERT_TRUE(c);
        EXPECT_EQ(c->barrier("init", 0.4), status::timeout);
        msgs[r] = last_error();
        std::vector<std::string> all;
        EXPECT_EQ(c->allgather("addrs", "x", all, 0.4), status::timeout);
        ag[r] = last_error();
        EXPECT_TRUE(all.empty());
    });
    for (int r = 0; r < 2; ++r) {
        EXPECT_NE(msgs[r].find("barrier 'init' timed out"), std::string::npos) << msgs[r];
        EXPECT_NE(msgs[r].find("ranks 2-4 have not arrived"), std::string::npos) << msgs[r];
        EXPECT_NE(msgs[r].find("ranks 3, 4 never connected to the store"), std::string::npos) << msgs[r];
        EXPECT_NE(ag[r].find("allgather 'addrs' timed out"), std::string::npos) << ag[r];
        EXPECT_NE(ag[r].find("ranks 2-4 have not contributed"), std::string::npos) << ag[r];
    }
}

TEST_F(BootStore, AbortReachesWaitingClients) {
    const int n = 3;
    start(n);
    std::vector<std::string> msgs(n);
    each_rank(n, [&](int r) {
        auto c = join(r, n);
        ASSERT_TRUE(c);
        ASSERT_EQ(c->barrier("up", 5.0), status::ok);
        if (r == 0) {
            ASSERT_EQ(c->abort("input file missing"), status::ok);
            return;
        }
        std::string v;
        EXPECT_EQ(r == 1 ? c->barrier("never", 10.0) : c->get("never", v, 10.0), status::peer_failed);
        msgs[r] = last_error();
        std::string why;
        EXPECT_TRUE(c->aborted(&why));
        EXPECT_EQ(why, msgs[r]);
        EXPECT_EQ(c->put("k", "v"), status::peer_failed);  // and everything after it fails too
    });
    for (int r = 1; r < n; ++r) EXPECT_EQ(msgs[r], "rank 0 aborted the job: input file missing");
}

TEST_F(BootStore, BroadcastAbortFromTheLauncher) {
    start(2);
    auto c0 = join(0, 2), c1 = join(1, 2);
    ASSERT_TRUE(c0 && c1);
    std::thread t([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        server_->broadcast_abort("hgasrun: rank 1 (pid 42) was killed by signal 9 (SIGKILL); ending the job");
    });
    EXPECT_EQ(c0->barrier("b", 10.0), status::peer_failed);
    t.join();
    EXPECT_NE(last_error().find("rank 1 (pid 42) was killed"), std::string::npos) << last_error();
    // aborted() polls without blocking; the notice reaches c1 at about the time it reached c0.
    std::string why;
    bool seen = false;
    for (int i = 0; i < 200 && !(seen = c1->aborted(&why)); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    EXPECT_TRUE(seen);
    EXPECT_NE(why.find("SIGKILL"), std::string::npos);
}

TEST_F(BootStore, LostClientCallsOnRankLostButGoodbyeDoesNot) {
    start(3);
    std::promise<int> lost;
    std::atomic<int> calls{0};
    server_->on_rank_lost([&](int r) {
        if (calls++ == 0) lost.set_value(r);
    });
    auto c0 = join(0, 3), c1 = join(1, 3), c2 = join(2, 3);
    ASSERT_TRUE(c0 && c1 && c2);
    ASSERT_EQ(c0->finalize(), status::ok);
    c2.reset();  // closes without a goodbye, as a crashed rank would
    auto f = lost.get_future();
    ASSERT_EQ(f.wait_for(std::chrono::seconds(5)), std::future_status::ready);
    EXPECT_EQ(f.get(), 2);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    EXPECT_EQ(calls.load(), 1);
    // Under hgasrun the store does not abort on its own: the launcher judges by process exit.
    std::string why;
    EXPECT_FALSE(c1->aborted(&why));
    server_->stop();  // before `lost` and `calls` go out of scope: the callback uses them
}

TEST_F(BootStore, LostStoreMeansPeerFailed) {
    start(2);
    auto c = join(0, 2);
    ASSERT_TRUE(c);
    std::thread t([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        server_->stop();
    });
    EXPECT_EQ(c->barrier("b", 10.0), status::peer_failed);
    t.join();
    EXPECT_NE(last_error().find("bootstrap store connection lost (launcher died?): hgasrun"), std::string::npos)
        << last_error();
}

TEST_F(BootStore, NoStoreListeningFailsAfterTheTimeout) {
    job_info j = job(1, 2);
    j.addr = "unix:" + dir_ + "/nobody.sock";
    auto t0 = std::chrono::steady_clock::now();
    auto c = client::connect(j, 0.3);
    ASSERT_FALSE(c.ok());
    EXPECT_GE(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(290));
    EXPECT_NE(last_error().find("could not reach the bootstrap store"), std::string::npos) << last_error();
    EXPECT_NE(last_error().find("is hgasrun still running?"), std::string::npos) << last_error();
}

TEST_F(BootStore, TcpWithEphemeralPort) {
    start(2, "tcp:127.0.0.1:0");
    const std::string a = server_->address();
    EXPECT_EQ(a.rfind("tcp:127.0.0.1:", 0), 0u) << a;
    EXPECT_NE(a, "tcp:127.0.0.1:0");
    each_rank(2, [&](int r) {
        auto c = join(r, 2);
        ASSERT_TRUE(c);
        std::vector<std::string> all;
        ASSERT_EQ(c->allgather("x", std::string(1 << 20, static_cast<char>('a' + r)), all, 5.0), status::ok);
        ASSERT_EQ(all.size(), 2u);
        EXPECT_EQ(all[1], std::string(1 << 20, 'b'));
        EXPECT_EQ(c->finalize(), status::ok);
    });
}

// Under srun/mpirun rank 0 serves the store itself; the others retry until it is up.
TEST_F(BootStore, RankZeroHostsTheStoreUnderSlurm) {
    const int n = 3;
    each_rank(n, [&](int r) {
        if (r == 0) std::this_thread::sleep_for(std::chrono::milliseconds(200));  // others start first
        auto c = client::connect(job(r, n, "slurm"), 5.0);
        ASSERT_TRUE(c.ok()) << last_error();
        std::vector<std::string> all;
        ASSERT_EQ((*c)->allgather("names", "r" + std::to_string(r), all, 5.0), status::ok) << last_error();
        EXPECT_EQ(all, (std::vector<std::string>{"r0", "r1", "r2"}));
        EXPECT_EQ((*c)->finalize(), status::ok);
    });
}

TEST_F(BootStore, HostedStoreTellsOthersWhenARankIsLost) {
    const int n = 3;
    std::vector<std::string> msgs(n);
    each_rank(n, [&](int r) {
        auto c = client::connect(job(r, n, "mpirun"), 5.0);
        ASSERT_TRUE(c.ok()) << last_error();
        ASSERT_EQ((*c)->barrier("up", 5.0), status::ok);
        if (r == 2) return;  // "dies": the client goes away without finalize
        EXPECT_EQ((*c)->barrier("down", 10.0), status::peer_failed);
        msgs[r] = last_error();
        EXPECT_EQ((*c)->finalize(), status::ok);
    });
    EXPECT_EQ(msgs[0], "rank 2 lost its connection to the store (died?)");
    EXPECT_EQ(msgs[1], "rank 2 lost its connection to the store (died?)");
}

// A connection that never says HELLO: once the store had one, nothing closed it (and 1100 of
// them exhausted the launcher's descriptors). Returns the raw socket, connected.
int raw_connect(const std::string &addr) {
    wire::address a;
    if (wire::parse_address(addr, a) != status::ok) return -1;
    int fd = -1, err = 0;
    return wire::connect_once(a, deadline(5.0), fd, err) == status::ok ? fd : -1;
}
// True once the store closed `fd` (end of file), within `seconds`.
bool closed_by_store(int fd, double seconds) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(seconds * 1000)) <= 0) return false;
    char b[64];
    return recv(fd, b, sizeof b, MSG_DONTWAIT) == 0;
}

TEST_F(BootStore, SilentConnectionIsClosedAfterTheHelloDeadline) {
    start(2);
    int fd = raw_connect(server_->address());
    ASSERT_GE(fd, 0);
    // The deadline is 5 s; well within 15 s the store must have closed it.
    EXPECT_TRUE(closed_by_store(fd, 15.0)) << "a connection that never said HELLO stayed open";
    close(fd);
    auto c0 = join(0, 2), c1 = join(1, 2);  // the store still serves the ranks
    ASSERT_TRUE(c0 && c1);
}

TEST_F(BootStore, UnauthenticatedConnectionsAreCappedAndRanksStillJoin) {
    start(2, "tcp:127.0.0.1:0");  // a port outlives the join (a unix socket file is unlinked then)
    std::vector<int> idle;
    for (int i = 0; i < 300; ++i) {
        int fd = raw_connect(server_->address());
        ASSERT_GE(fd, 0) << "connection " << i;
        idle.push_back(fd);
    }
    // Beyond the cap (128) the oldest ones go at once, long before the HELLO deadline. Each
    // closed socket stays readable (end of file), so counting again sees the earlier ones too.
    auto count_closed = [&] {
        int n = 0;
        for (int fd : idle) n += closed_by_store(fd, 0.0) ? 1 : 0;
        return n;
    };
    int closed = count_closed();
    for (int i = 0; i < 100 && closed < 300 - 128; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        closed = count_closed();
    }
    EXPECT_GE(closed, 300 - 128);
    auto c0 = join(0, 2), c1 = join(1, 2);
    ASSERT_TRUE(c0 && c1);
    each_rank(2, [&](int r) { EXPECT_EQ((r ? c1 : c0)->barrier("b", 5.0), status::ok) << last_error(); });
    // Every rank joined: the remaining strangers are closed and the listener is gone.
    int open_left = 0;
    for (int fd : idle) {
        if (!closed_by_store(fd, 5.0)) ++open_left;
        close(fd);
    }
    EXPECT_EQ(open_left, 0);
    EXPECT_LT(raw_connect(server_->address()), 0) << "the store still accepts connections after every rank joined";
}

TEST_F(BootStore, LostStoreEndsTheJobForAborted) {
    // aborted() is what the runtime's waits look at: a store that went away (its host died)
    // must show there, naming who served it, not only in the store client's own waits.
    start(2);
    auto c0 = join(0, 2), c1 = join(1, 2);
    ASSERT_TRUE(c0 && c1);
    server_->stop();
    std::string why;
    bool ended = false;
    for (int i = 0; i < 500 && !ended; ++i) {
        ended = c0->aborted(&why);
        if (!ended) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    EXPECT_TRUE(ended);
    EXPECT_NE(why.find("bootstrap store connection lost (launcher died?)"), std::string::npos) << why;
    int code = 0;
    EXPECT_FALSE(c0->exit_requested(&code));
}

TEST(BootSingleton, WorksWithoutAStore) {
    job_info j;  // rank 0 of 1, no address
    j.launcher = "singleton";
    auto c = client::connect(j, 1.0);
    ASSERT_TRUE(c.ok()) << last_error();
    ASSERT_EQ((*c)->put("k", "v"), status::ok);
    std::string v;
    ASSERT_EQ((*c)->get("k", v, 1.0), status::ok);
    EXPECT_EQ(v, "v");
    EXPECT_EQ((*c)->get("absent", v, 100.0), status::timeout);  // at once: nobody could put it
    EXPECT_NE(last_error().find("'absent'"), std::string::npos);
    EXPECT_EQ((*c)->barrier("b", 1.0), status::ok);
    std::vector<std::string> all;
    ASSERT_EQ((*c)->allgather("a", "mine", all, 1.0), status::ok);
    EXPECT_EQ(all, std::vector<std::string>{"mine"});
    EXPECT_EQ((*c)->finalize(), status::ok);
}

// ---- topology and random secrets --------------------------------------------------------

TEST(BootTopology, FromNodeNames) {
    const std::vector<std::string> names = {"b", "a", "b", "c", "a", "b"};
    auto t = topology::from_node_names(names, 4);
    EXPECT_EQ(t.node_n, 3);
    EXPECT_EQ(t.node_of, (std::vector<int>{0, 1, 0, 2, 1, 0}));
    EXPECT_EQ(t.local_of, (std::vector<int>{0, 0, 1, 0, 1, 2}));
    EXPECT_EQ(t.node_me, 1);
    EXPECT_EQ(t.local_rank, 1);
    EXPECT_EQ(t.local_n, 2);
    auto one = topology::from_node_names({"x"}, 0);
    EXPECT_EQ(one.node_n, 1);
    EXPECT_EQ(one.local_n, 1);
}

TEST(BootSecret, LengthAlphabetUniqueness) {
    std::set<std::string> seen;
    for (int i = 0; i < 200; ++i) {
        std::string s = random_secret();
        ASSERT_EQ(s.size(), 32u);
        EXPECT_EQ(s.find_first_not_of("0123456789abcdef"), std::string::npos) << s;
        seen.insert(s);
    }
    EXPECT_EQ(seen.size(), 200u);
    EXPECT_EQ(random_secret(4).size(), 8u);
}

// ---- detect() ---------------------------------------------------------------------------

class BootDetect : public ::testing::Test {
protected:
    static constexpr const char *k_vars[] = {
        "HGAS_RANK", "HGAS_SIZE", "HGAS_BOOT_ADDR", "HGAS_BOOT_SECRET", "HGAS_JOB_ID", "HGAS_NODE_NAME",
        "HGASRUN_PID", "SLURM_PROCID", "SLURM_NTASKS", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
        "PMI_RANK", "PMI_SIZE"};
    void SetUp() override {
        for (const char *v : k_vars) {
            const char *old = std::getenv(v);
            saved_.emplace_back(v, old ? std::make_unique<std::string>(old) : nullptr);
            unsetenv(v);
        }
    }
    void TearDown() override {
        for (auto &[name, val] : saved_) {
            if (val) setenv(name.c_str(), val->c_str(), 1);
            else unsetenv(name.c_str());
        }
    }
    result<job_info> run() {
        auto cfg = settings::from_env();
        EXPECT_TRUE(cfg.ok()) << last_error();
        return detect(*cfg);
    }
    void store_env() {
        setenv("HGAS_BOOT_ADDR", "tcp:node0:29500", 1);
        setenv("HGAS_BOOT_SECRET", "abc123", 1);
    }
    std::vector<std::pair<std::string, std::unique_ptr<std::string>>> saved_;
};

TEST_F(BootDetect, NoVariablesMeansSingleton) {
    auto j = run();
    ASSERT_TRUE(j.ok()) << last_error();
    EXPECT_EQ(j->rank, 0);
    EXPECT_EQ(j->size, 1);
    EXPECT_EQ(j->launcher, "singleton");
    EXPECT_EQ(j->addr, "");
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    EXPECT_EQ(j->node_name, host);
    EXPECT_FALSE(j->job_id.empty());
}

TEST_F(BootDetect, Slurm) {
    setenv("SLURM_PROCID", "2", 1);
    setenv("SLURM_NTASKS", "4", 1);
    store_env();
    setenv("HGAS_NODE_NAME", "gpu17", 1);
    auto j = run();
    ASSERT_TRUE(j.ok()) << last_error();
    EXPECT_EQ(j->rank, 2);
    EXPECT_EQ(j->size, 4);
    EXPECT_EQ(j->launcher, "slurm");
    EXPECT_EQ(j->addr, "tcp:node0:29500");
    EXPECT_EQ(j->secret, "abc123");
    EXPECT_EQ(j->node_name, "gpu17");
    // The job id is derived from the secret: the same on every rank, different across jobs.
    EXPECT_EQ(j->job_id.size(), 12u);
    const std::string id = j->job_id;
    setenv("SLURM_PROCID", "3", 1);
    EXPECT_EQ(run()->job_id, id);
    setenv("HGAS_BOOT_SECRET", "other", 1);
    EXPECT_NE(run()->job_id, id);
    setenv("HGAS_JOB_ID", "myjob", 1);
    EXPECT_EQ(run()->job_id, "myjob");
}

TEST_F(BootDetect, OpenMpiAndPmi) {
    store_env();
    setenv("PMI_RANK", "1", 1);
    setenv("PMI_SIZE", "2", 1);
    auto p = run();
    ASSERT_TRUE(p.ok()) << last_error();
    EXPECT_EQ(p->launcher, "pmi");
    EXPECT_EQ(p->rank, 1);
    EXPECT_EQ(p->size, 2);
    setenv("OMPI_COMM_WORLD_RANK", "5", 1);
    setenv("OMPI_COMM_WORLD_SIZE", "8", 1);
    // mpirun inside an sbatch script: the batch step's SLURM_PROCID=0 must not win.
    setenv("SLURM_PROCID", "0", 1);
    setenv("SLURM_NTASKS", "1", 1);
    auto o = run();
    ASSERT_TRUE(o.ok()) << last_error();
    EXPECT_EQ(o->launcher, "mpirun");
    EXPECT_EQ(o->rank, 5);
    EXPECT_EQ(o->size, 8);
}

TEST_F(BootDetect, HgasVariablesWinAndNameTheLauncher) {
    store_env();
    setenv("SLURM_PROCID", "0", 1);
    setenv("SLURM_NTASKS", "2", 1);
    setenv("HGAS_RANK", "3", 1);
    setenv("HGAS_SIZE", "4", 1);
    auto e = run();
    ASSERT_TRUE(e.ok()) << last_error();
    EXPECT_EQ(e->rank, 3);
    EXPECT_EQ(e->launcher, "env");  // set by hand: rank 0 will host the store
    setenv("HGASRUN_PID", "1234", 1);
    EXPECT_EQ(run()->launcher, "hgasrun");
}

TEST_F(BootDetect, ClearErrors) {
    setenv("SLURM_PROCID", "1", 1);
    setenv("SLURM_NTASKS", "4", 1);
    auto j = run();
    ASSERT_FALSE(j.ok());
    EXPECT_EQ(j.error(), status::bootstrap);
    for (const char *word : {"hgasrun", "HGAS_BOOT_ADDR", "HGAS_BOOT_SECRET", "rank 1 of 4", "slurm"})
        EXPECT_NE(last_error().find(word), std::string::npos) << word << " not in: " << last_error();

    setenv("HGAS_BOOT_ADDR", "tcp:node0:29500", 1);
    ASSERT_FALSE(run().ok());
    EXPECT_NE(last_error().find("HGAS_BOOT_SECRET is not"), std::string::npos) << last_error();

    setenv("SLURM_PROCID", "4", 1);
    setenv("HGAS_BOOT_SECRET", "s", 1);
    ASSERT_FALSE(run().ok());
    EXPECT_NE(last_error().find("out of range"), std::string::npos) << last_error();

    setenv("SLURM_PROCID", "x", 1);
    ASSERT_FALSE(run().ok());
    EXPECT_NE(last_error().find("SLURM_PROCID='x'"), std::string::npos) << last_error();

    unsetenv("SLURM_PROCID");
    unsetenv("SLURM_NTASKS");
    setenv("HGAS_RANK", "0", 1);
    ASSERT_FALSE(run().ok());
    EXPECT_NE(last_error().find("HGAS_RANK and HGAS_SIZE must be set together"), std::string::npos)
        << last_error();
}

}  // namespace
