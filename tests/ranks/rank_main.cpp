// main() for multi-rank GoogleTest programs started by hgasrun: every rank runs every test;
// ranks meet at barriers inside tests. Only rank 0 prints GoogleTest's progress unless
// HGAS_TEST_VERBOSE=1, but every rank's failures are printed and fail the job.
// With HGAS_THREADS=T (hgasrun --threads T) a program built with HGAS_RANK_THREADS runs each
// test body on T threads, one rank each (rank_test.hpp says why not RUN_ALL_TESTS).
#include <gtest/gtest.h>
#include <hgas/hgas.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "rank_test.hpp"

int &rank_test::thread_level() {
    static int level = HGAS_THREAD_SERIALIZED;  // what hgas_init gives
    return level;
}

namespace {
std::vector<std::pair<const char *, void (*)()>> &registry() {
    static std::vector<std::pair<const char *, void (*)()>> tests;
    return tests;
}
std::atomic<int> g_failures{0};
thread_local int t_stops = 0;  // fatal failures and skips of this thread
std::mutex g_fixtures;
}  // namespace

int rank_test::stops_on_this_thread() { return t_stops; }

void rank_test::lock_fixtures(bool lock) {
    if (lock) g_fixtures.lock();
    else g_fixtures.unlock();
}

bool rank_test::add(const char *name, void (*body)()) {
    registry().emplace_back(name, body);
    return true;
}

namespace {
// Prints failures of ranks other than 0 (whose normal output is silenced).
class failure_printer : public testing::EmptyTestEventListener {
    void OnTestPartResult(const testing::TestPartResult &r) override {
        if (r.failed())
            std::fprintf(stderr, "[rank %d] FAILED at %s:%d\n%s\n", hgas_rank_me(), r.file_name() ? r.file_name() : "?",
                         r.line_number(), r.summary());
        if (r.failed()) g_failures.fetch_add(1);
        if (r.fatally_failed() || r.skipped()) ++t_stops;
    }
};

// GoogleTest's filter syntax (GTEST_FILTER / --gtest_filter), which RUN_ALL_TESTS applies and
// the rank threads' runner must too: "pos1:pos2-neg1:neg2", patterns with * and ?.
bool glob(const char *p, const char *s) {
    if (!*p) return !*s;
    if (*p == '*') return glob(p + 1, s) || (*s && glob(p, s + 1));
    return *s && (*p == '?' || *p == *s) && glob(p + 1, s + 1);
}
bool any_matches(const std::string &patterns, const std::string &name) {
    size_t at = 0;
    while (at <= patterns.size()) {
        size_t end = patterns.find(':', at);
        if (end == std::string::npos) end = patterns.size();
        if (end > at && glob(patterns.substr(at, end - at).c_str(), name.c_str())) return true;
        at = end + 1;
    }
    return false;
}
bool selected(const char *name) {
    const std::string f = GTEST_FLAG_GET(filter);
    const size_t minus = f.find('-');
    const std::string pos = minus == std::string::npos ? f : f.substr(0, minus);
    const std::string neg = minus == std::string::npos ? "" : f.substr(minus + 1);
    return (pos.empty() || any_matches(pos, name)) && !any_matches(neg, name);
}

// One rank thread: join, run every registered body in order (a barrier after each, so that a
// failed test does not leave its ranks in different tests), leave.
void rank_thread(int t, bool verbose) {
    int provided = -1;
    if (hgas_init_thread(rank_test::thread_level(), &provided) != HGAS_OK) {
        std::fprintf(stderr, "thread %d: hgas_init_thread failed: %s\n", t, hgas_last_error());
        g_failures.fetch_add(1);
        return;
    }
    const int me = hgas_rank_me();
    for (const auto &[name, body] : registry()) {
        if (!selected(name)) continue;  // the same on every rank thread: the barriers still pair
        if (me == 0 || verbose) std::printf("[ RUN      ] %s (rank %d of %d)\n", name, me, hgas_rank_n());
        const int before = g_failures.load();
        body();
        if (hgas_barrier() != HGAS_OK) {
            std::fprintf(stderr, "[rank %d] barrier after %s failed: %s\n", me, name, hgas_last_error());
            g_failures.fetch_add(1);
            break;
        }
        if (me == 0 || verbose) std::printf("%s %s\n", g_failures.load() == before ? "[       OK ]" : "[  FAILED  ]", name);
    }
    if (hgas_finalize() != HGAS_OK) {
        std::fprintf(stderr, "rank %d: hgas_finalize failed: %s\n", me, hgas_last_error());
        g_failures.fetch_add(1);
    }
}

int run_as_threads(int threads, bool verbose) {
    if (registry().empty()) {
        std::fprintf(stderr, "HGAS_THREADS=%d: this test program was not built for ranks as threads (HGAS_RANK_THREADS); "
                     "run it without --threads\n", threads);
        return 1;
    }
    auto &listeners = testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new failure_printer);
    std::vector<std::thread> ts;
    for (int t = 0; t < threads; ++t) ts.emplace_back(rank_thread, t, verbose);
    for (auto &t : ts) t.join();
    const int f = g_failures.load();
    if (f) std::fprintf(stderr, "%d failure(s) in this process's ranks\n", f);
    else {
        size_t ran = 0;
        for (const auto &t : registry()) ran += selected(t.first);
        std::printf("[  PASSED  ] %zu tests on %d rank threads\n", ran, threads);
    }
    return f ? 1 : 0;
}
}  // namespace

int main(int argc, char **argv) {
    testing::InitGoogleTest(&argc, argv);
    const char *verbose = std::getenv("HGAS_TEST_VERBOSE");
    if (const char *t = std::getenv("HGAS_THREADS"); t && std::atoi(t) > 1)
        return run_as_threads(std::atoi(t), verbose && *verbose == '1');
    int provided = -1;
    if (hgas_init_thread(rank_test::thread_level(), &provided) != HGAS_OK || provided != rank_test::thread_level()) {
        std::fprintf(stderr, "hgas_init_thread(%d) failed (provided %d): %s\n", rank_test::thread_level(), provided,
                     hgas_last_error());
        return 1;
    }
    if (hgas_rank_me() != 0 && !(verbose && *verbose == '1')) {
        auto &listeners = testing::UnitTest::GetInstance()->listeners();
        delete listeners.Release(listeners.default_result_printer());
        listeners.Append(new failure_printer);
    }
    int rc = RUN_ALL_TESTS();
    if (hgas_finalize() != HGAS_OK) {
        std::fprintf(stderr, "rank %d: hgas_finalize failed: %s\n", hgas_rank_me(), hgas_last_error());
        rc = 1;
    }
    return rc;
}
