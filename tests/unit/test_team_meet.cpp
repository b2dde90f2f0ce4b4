// The host meeting of rank threads at a collective (gpu/team_meet.hpp): who issues the call,
// what every member learns, and how a meeting ends when it cannot run. Events are opaque here,
// so no GPU is needed. No test depends on which thread arrives last: the outcomes say it.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "base/status.hpp"
#include "gpu/team_meet.hpp"

namespace {

using hgas::gpu::team_meet;

int done_event;  // stands for the event a launch records

struct member_result {
    team_meet::outcome o;
    hgas::status st = hgas::status::ok;
    std::string msg;
    bool released = false;  // its leave was the last
};

struct run {
    std::vector<member_result> r;
    std::atomic<int> launches{0};
    std::atomic<int> launcher{-1};        // the member that ran the launch
    std::vector<team_meet::member> seen;  // what the launcher was given
};

// Members `who` of an n-member call `key` arrive on threads of their own at once (member q's
// vector at 0x1000 (q + 1), output at +8, arguments or count fp(q), broken where broken(q)); the launcher
// returns what `launch_result` says; a waiting member calls `progress(q)`. Each member that
// arrives without an error leaves.
template <class FP, class BROKEN, class LAUNCH>
void meet(run &x, uint64_t key, int n, const std::vector<int> &who, FP fp, BROKEN broken, LAUNCH launch_result,
          double timeout_s = 10, std::function<hgas::status(int)> progress = {}) {
    x.r.assign(static_cast<size_t>(n), {});
    std::vector<std::thread> th;
    std::atomic<int> ready{0};
    for (int q : who)
        th.emplace_back([&, q] {
            team_meet::member m;
            m.in = reinterpret_cast<const void *>(uintptr_t{0x1000} * static_cast<uintptr_t>(q + 1));
            m.out = reinterpret_cast<void *>(uintptr_t{0x1000} * static_cast<uintptr_t>(q + 1) + 8);
            m.ready = &x;
            m.gpu = 0;
            m.usable = true;
            if constexpr (std::is_same_v<decltype(fp(q)), team_meet::member::arguments>)
                m.args = fp(q);
            else
                m.args.count = fp(q);
            m.broken = broken(q);
            // A latch: every thread starts its arrival together.
            ++ready;
            while (ready.load() < static_cast<int>(who.size())) std::this_thread::yield();
            auto launch = [&, q](const std::vector<team_meet::member> &all) -> hgas::result<void *> {
                ++x.launches;
                x.launcher = q;
                x.seen = all;
                return launch_result();
            };
            member_result &res = x.r[static_cast<size_t>(q)];
            team_meet::progress_fn pf;
            if (progress) pf = [&progress, q] { return progress(q); };
            auto o = team_meet::process().arrive(key, n, q, m, timeout_s, launch, "test call", pf);
            if (!o.ok()) {
                res.st = o.error();
                res.msg = hgas::last_error();
                return;
            }
            res.o = *o;
            res.released = team_meet::process().leave(key);
        });
    for (auto &t : th) t.join();
}

auto same_fp = [](int) { return 7u; };
auto none_broken = [](int) { return false; };
auto runs = [] { return hgas::result<void *>(static_cast<void *>(&done_event)); };

}  // namespace

TEST(TeamMeet, TheLastToArriveIssuesTheCallOnceForAll) {
    for (int n : {2, 3, 8}) {
        run x;
        std::vector<int> all;
        for (int q = 0; q < n; ++q) all.push_back(q);
        meet(x, 100 + static_cast<uint64_t>(n), n, all, same_fp, none_broken, runs);
        EXPECT_EQ(x.launches.load(), 1) << n;
        int last = 0, released = 0;
        for (int q = 0; q < n; ++q) {
            const member_result &r = x.r[static_cast<size_t>(q)];
            EXPECT_EQ(r.st, hgas::status::ok) << r.msg;
            EXPECT_EQ(r.o.done, static_cast<void *>(&done_event)) << "member " << q;
            EXPECT_EQ(r.o.mismatch, -1);
            EXPECT_EQ(r.o.broken, -1);
            last += r.o.last;
            released += r.released;
            if (r.o.last) {
                EXPECT_EQ(x.launcher.load(), q) << "the member told it was last ran the launch";
            }
        }
        EXPECT_EQ(last, 1) << n;
        EXPECT_EQ(released, 1) << "one member releases the done event";
        ASSERT_EQ(x.seen.size(), static_cast<size_t>(n));
        for (int q = 0; q < n; ++q) {
            EXPECT_EQ(x.seen[static_cast<size_t>(q)].in, reinterpret_cast<const void *>(uintptr_t{0x1000} * (q + 1)))
                << "the launcher sees member " << q << "'s entry at its place";
            EXPECT_EQ(x.seen[static_cast<size_t>(q)].args.count, 7u);
        }
        EXPECT_EQ(team_meet::process().open_calls(), 0u);
    }
}

TEST(TeamMeet, ALaunchThatRunsNothingSendsEveryMemberElsewhere) {
    run x;
    meet(x, 200, 3, {0, 1, 2}, same_fp, none_broken, [] { return hgas::result<void *>(static_cast<void *>(nullptr)); });
    EXPECT_EQ(x.launches.load(), 1);
    for (const member_result &r : x.r) {
        EXPECT_EQ(r.st, hgas::status::ok) << r.msg;
        EXPECT_EQ(r.o.done, nullptr);
    }
    EXPECT_EQ(team_meet::process().open_calls(), 0u);
}

TEST(TeamMeet, OtherArgumentsRunNothingAndEveryMemberLearnsWhoDiffersFromMemberZero) {
    for (int odd : {0, 2}) {
        run x;
        meet(
            x, 300 + static_cast<uint64_t>(odd), 4, {0, 1, 2, 3}, [odd](int q) { return q == odd ? 9u : 7u; },
            none_broken, runs);
        EXPECT_EQ(x.launches.load(), 0);
        for (const member_result &r : x.r) {
            EXPECT_EQ(r.st, hgas::status::ok) << r.msg;
            EXPECT_EQ(r.o.mismatch, odd == 0 ? 1 : odd) << "against member 0's arguments";
            EXPECT_EQ(r.o.done, nullptr);
        }
        EXPECT_EQ(team_meet::process().open_calls(), 0u);
    }
}

TEST(TeamMeet, ABrokenMemberEndsTheMeetingAtOnce) {
    run x;
    const auto t0 = std::chrono::steady_clock::now();
    meet(
        x, 400, 3, {0, 1, 2}, same_fp, [](int q) { return q == 1; }, runs, 30.0);
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10)) << "no member waits for HGAS_TIMEOUT";
    EXPECT_EQ(x.launches.load(), 0);
    for (const member_result &r : x.r) EXPECT_EQ(r.o.broken, 1);
    EXPECT_EQ(team_meet::process().open_calls(), 0u);
}

TEST(TeamMeet, AFailedLaunchFailsEveryMemberWithItsMessage) {
    run x;
    meet(x, 500, 3, {0, 1, 2}, same_fp, none_broken,
         [] { return hgas::result<void *>(hgas::fail(hgas::status::internal, "the launch failed: %s", "boom")); });
    EXPECT_EQ(x.launches.load(), 1);
    for (const member_result &r : x.r) {
        EXPECT_EQ(r.st, hgas::status::internal);
        EXPECT_NE(r.msg.find("boom"), std::string::npos) << r.msg;
    }
    EXPECT_EQ(team_meet::process().open_calls(), 0u);
}

TEST(TeamMeet, AMemberThatNeverComesEndsTheWaitWithItsNumberAndALateOneFailsToo) {
    run x;
    meet(x, 600, 3, {0, 1}, same_fp, none_broken, runs, 0.2);
    EXPECT_EQ(x.launches.load(), 0);
    for (int q : {0, 1}) {
        const member_result &r = x.r[static_cast<size_t>(q)];
        EXPECT_EQ(r.st, hgas::status::timeout);
        EXPECT_NE(r.msg.find("member(s) 2 "), std::string::npos) << r.msg;
    }
    EXPECT_EQ(team_meet::process().open_calls(), 0u) << "the members withdrew";
    // The late member finds nobody: it does not run the call with the others' stale entries.
    run late;
    meet(late, 600, 3, {2}, same_fp, none_broken, runs, 0.2);
    EXPECT_EQ(late.launches.load(), 0);
    EXPECT_EQ(late.r[2].st, hgas::status::timeout);
    EXPECT_NE(late.r[2].msg.find("member(s) 0, 1 "), std::string::npos) << late.r[2].msg;
    EXPECT_EQ(team_meet::process().open_calls(), 0u);
}

TEST(TeamMeet, TwoTeamsAtOnceAreTwoCalls) {
    // Two teams (their keys differ) of two members each, all four threads arriving together.
    run a, b;
    std::thread ta([&] { meet(a, 700, 2, {0, 1}, same_fp, none_broken, runs); });
    std::thread tb([&] {
        meet(
            b, 701, 2, {0, 1}, [](int) { return 8u; }, none_broken, runs);
    });
    ta.join();
    tb.join();
    EXPECT_EQ(a.launches.load(), 1);
    EXPECT_EQ(b.launches.load(), 1);
    for (const run *x : {&a, &b})
        for (const member_result &r : x->r) {
            EXPECT_EQ(r.st, hgas::status::ok) << r.msg;
            EXPECT_EQ(r.o.mismatch, -1) << "each team's members are met with their own";
        }
    EXPECT_EQ(team_meet::process().open_calls(), 0u);
}

TEST(TeamMeet, ArgumentsAreComparedWholeNotByAHash) {
    // Through the meeting, member 1 differing from member 0 in one field at a time: the count
    // only above bit 24 (what a 24-bit fingerprint would not see), then which collective, the
    // root, the type, the op. Every difference is a mismatch and nothing runs.
    const uint64_t big = uint64_t{1} << 24;
    for (int field = 0; field < 5; ++field) {
        run x;
        auto differ = [field, big](int q) {
            team_meet::member::arguments a;
            a.count = 7;
            if (q == 1) {
                if (field == 0) a.count = 7 + big;
                if (field == 1) a.what = 1;
                if (field == 2) a.root = 1;
                if (field == 3) a.type = 1;
                if (field == 4) a.op = 1;
            }
            return a;
        };
        meet(x, 800 + static_cast<uint64_t>(field), 2, {0, 1}, differ, none_broken, runs);
        EXPECT_EQ(x.launches.load(), 0) << "field " << field;
        for (const member_result &r : x.r) EXPECT_EQ(r.o.mismatch, 1) << "field " << field;
        EXPECT_EQ(team_meet::process().open_calls(), 0u);
    }
}

TEST(TeamMeet, AWaitingMemberRunsItsRanksProgressAndItsErrorEndsTheWait) {
    // Member 1 comes only once member 0's progress has run a few times (what a member whose
    // stream needs the device proxy, run inside member 0's wait, would see).
    std::atomic<int> polls{0};
    std::atomic<bool> go{false};
    run x;
    std::thread late([&] {
        while (!go.load()) std::this_thread::yield();
        meet(x, 900, 2, {1}, same_fp, none_broken, runs);
    });
    run first;
    meet(first, 900, 2, {0}, same_fp, none_broken, runs, 10, [&](int) {
        if (++polls == 3) go = true;
        return hgas::status::ok;
    });
    late.join();
    EXPECT_GE(polls.load(), 3);
    EXPECT_EQ(first.r[0].st, hgas::status::ok) << first.r[0].msg;
    EXPECT_EQ(x.r[1].st, hgas::status::ok) << x.r[1].msg;
    EXPECT_EQ(first.launches.load() + x.launches.load(), 1);
    EXPECT_EQ(team_meet::process().open_calls(), 0u);

    // A progress error (say, a peer died) ends the wait at once with that error, and the member
    // withdraws: the call is gone.
    run dead;
    const auto t0 = std::chrono::steady_clock::now();
    meet(dead, 901, 2, {0}, same_fp, none_broken, runs, 30,
         [](int) { return hgas::fail(hgas::status::peer_failed, "rank 5 died"); });
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10));
    EXPECT_EQ(dead.r[0].st, hgas::status::peer_failed);
    EXPECT_NE(dead.r[0].msg.find("rank 5 died"), std::string::npos) << dead.r[0].msg;
    EXPECT_EQ(team_meet::process().open_calls(), 0u);
}

TEST(TeamMeet, ALaunchThatThrowsFailsEveryMember) {
    run x;
    meet(x, 1000, 3, {0, 1, 2}, same_fp, none_broken,
         []() -> hgas::result<void *> { throw std::runtime_error("out of launch slots"); });
    for (const member_result &r : x.r) {
        EXPECT_EQ(r.st, hgas::status::internal);
        EXPECT_NE(r.msg.find("out of launch slots"), std::string::npos) << r.msg;
    }
    EXPECT_EQ(team_meet::process().open_calls(), 0u);
}

TEST(TeamMeet, ALaunchThatDoesNotReturnWithinTheTimeoutFailsTheOthersNamingTheLast) {
    // The launch takes longer than the deadline: the waiting members give up naming the last
    // member; it finishes, leaves, and the call is gone.
    run x;
    meet(
        x, 1100, 3, {0, 1, 2}, same_fp, none_broken,
        [] {
            std::this_thread::sleep_for(std::chrono::milliseconds(600));
            return hgas::result<void *>(static_cast<void *>(&done_event));
        },
        0.2);
    EXPECT_EQ(x.launches.load(), 1);
    const int last = x.launcher.load();
    for (int q = 0; q < 3; ++q) {
        const member_result &r = x.r[static_cast<size_t>(q)];
        if (q == last) {
            EXPECT_EQ(r.st, hgas::status::ok) << r.msg;
            EXPECT_TRUE(r.released) << "the others counted themselves out";
        } else {
            EXPECT_EQ(r.st, hgas::status::timeout);
            EXPECT_NE(r.msg.find("member " + std::to_string(last) + " of the team, which arrived last"),
                      std::string::npos)
                << r.msg;
        }
    }
    EXPECT_EQ(team_meet::process().open_calls(), 0u);
}

TEST(TeamMeet, TheLaunchGetsTheWholeTimeoutHoweverLongTheGatheringTook) {
    // Member 0 waits 1.2 s for member 1 (timeout 2 s), whose launch then takes 1.2 s: each part
    // is within the timeout, both together are not. Member 0 must wait for the launch. (Wide
    // margins: the CI machine is loaded.)
    run first, second;
    std::thread late([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(1200));
        meet(
            second, 1200, 2, {1}, same_fp, none_broken,
            [] {
                std::this_thread::sleep_for(std::chrono::milliseconds(1200));
                return hgas::result<void *>(static_cast<void *>(&done_event));
            },
            2.0);
    });
    // Its progress takes a while too, so the last member may come while it is away.
    meet(first, 1200, 2, {0}, same_fp, none_broken, runs, 2.0, [](int) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        return hgas::status::ok;
    });
    late.join();
    EXPECT_EQ(first.r[0].st, hgas::status::ok) << first.r[0].msg;
    EXPECT_EQ(second.r[1].st, hgas::status::ok) << second.r[1].msg;
    EXPECT_EQ(first.r[0].o.done, static_cast<void *>(&done_event));
    EXPECT_EQ(team_meet::process().open_calls(), 0u);
}

TEST(TeamMeet, AMemberThatCameTooLateNamesThoseThatGaveUp) {
    // Members 0 (timeout 0.6 s) and 1 (3 s) arrive; member 0 gives up; member 2 comes at 1.5 s
    // (timeout 0.6 s), when every member has come once: its message names member 0 as having
    // given up, not an empty list of members that never came.
    run r0, r1, r2;
    std::thread t1([&] { meet(r1, 1300, 3, {1}, same_fp, none_broken, runs, 3.0); });
    std::thread t2([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(1500));
        meet(r2, 1300, 3, {2}, same_fp, none_broken, runs, 0.6);
    });
    meet(r0, 1300, 3, {0}, same_fp, none_broken, runs, 0.6);
    t1.join();
    t2.join();
    EXPECT_EQ(r0.r[0].st, hgas::status::timeout);
    EXPECT_NE(r0.r[0].msg.find("member(s) 2 "), std::string::npos) << r0.r[0].msg;
    EXPECT_EQ(r2.r[2].st, hgas::status::timeout);
    EXPECT_NE(r2.r[2].msg.find("member(s) 0 of the team, rank threads of this process, gave up"), std::string::npos)
        << r2.r[2].msg;
    EXPECT_EQ(r1.r[1].st, hgas::status::timeout);
    EXPECT_EQ(team_meet::process().open_calls(), 0u);
}

TEST(TeamMeet, AMemberOutOfRangeFailsAndLeavesNoCallBehind) {
    team_meet::member m;
    auto launch = [](const std::vector<team_meet::member> &) { return hgas::result<void *>(nullptr); };
    for (int me : {-1, 2, 7}) {
        auto o = team_meet::process().arrive(1400, 2, me, m, 1.0, launch, "test call");
        EXPECT_FALSE(o.ok()) << me;
        EXPECT_EQ(o.error(), hgas::status::internal);
    }
    EXPECT_EQ(team_meet::process().open_calls(), 0u);
}
