// HGAS_THREAD_MULTIPLE: eight threads per rank call hgas at once (puts, atomics, handles,
// quiet), and a thread blocked in a wait (a signal wait, a barrier, hgas_wait) does not keep
// its rank's other threads out of hgas. Built a second time under ThreadSanitizer
// (-DHGAS_TSAN=ON, `make tsan`).
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "rank_test.hpp"

namespace {
const bool level_set = (rank_test::thread_level() = HGAS_THREAD_MULTIPLE, true);
constexpr int k_threads = 8;

// A thread that acts for the calling thread's rank: with ranks as threads a thread that did
// not call hgas_init has no rank until it attaches (with one rank per process it has the
// process's anyway, and attaching changes nothing).
template <class F>
std::thread for_this_rank(F f) {
    const hgas_rank_handle_t self = hgas_rank_self();
    return std::thread([self, f]() mutable {
        const int me = hgas_rank_me();  // before attaching: the sole rank, or none with rank threads
        EXPECT_EQ(hgas_thread_attach(self), HGAS_OK) << hgas_last_error();
        EXPECT_NE(hgas_rank_me(), -1);
        if (me != -1) EXPECT_EQ(hgas_rank_me(), me);
        f();
        EXPECT_EQ(hgas_thread_attach(nullptr), HGAS_OK) << hgas_last_error();
    });
}

template <class F>
void on_threads(int n, F f) {
    std::vector<std::thread> ts;
    for (int t = 0; t < n; ++t) ts.push_back(for_this_rank([f, t]() mutable { f(t); }));
    for (auto &t : ts) t.join();
}
}  // namespace

TEST(ThreadMultiple, LevelIsGranted) {
    ASSERT_TRUE(level_set);
    EXPECT_EQ(hgas_query_thread(), HGAS_THREAD_MULTIPLE);
    int provided = -1;
    EXPECT_EQ(hgas_init_thread(HGAS_THREAD_MULTIPLE, &provided), HGAS_ERR_ALREADY_INITIALIZED);
    EXPECT_EQ(provided, -1);
}

// Every thread of every rank adds to a counter on every rank: the sums must be exact.
TEST(ThreadMultiple, FetchAddsFromEightThreadsAddUp) {
    const int me = hgas_rank_me(), n = hgas_rank_n();
    int64_t *counter = nullptr;
    HGAS_OK_OR_FAIL(hgas_calloc(1, sizeof(int64_t), reinterpret_cast<void **>(&counter)));
    const int iters = 300;
    std::atomic<int> errors{0};
    on_threads(k_threads, [&](int t) {
        int64_t last_seen = -1;
        for (int i = 0; i < iters; ++i) {
            const int target = (me + t + i) % n;
            int64_t old = -1;
            if (hgas_atomic_fetch_add64(gp(counter, target), 1, &old) != HGAS_OK || old < 0) ++errors;
            if (target == me && old <= last_seen) ++errors;  // our own adds to our counter only grow it
            if (target == me) last_seen = old;
        }
        if (hgas_quiet() != HGAS_OK) ++errors;
    });
    EXPECT_EQ(errors.load(), 0) << hgas_last_error();
    HGAS_OK_OR_FAIL(hgas_barrier());
    int64_t v = -1;
    HGAS_OK_OR_FAIL(hgas_atomic_fetch64(gp(counter, me), &v));
    int64_t expected = 0;  // the adds every thread of every rank aimed at this rank
    for (int r = 0; r < n; ++r)
        for (int t = 0; t < k_threads; ++t)
            for (int i = 0; i < iters; ++i) expected += (r + t + i) % n == me;
    EXPECT_EQ(v, expected) << "rank " << me;
    HGAS_OK_OR_FAIL(hgas_barrier());
    HGAS_OK_OR_FAIL(hgas_free(counter));
}

// Each thread writes its own slice of the right neighbour's buffer with blocking puts, _nbi
// puts completed by its quiet, and handles it waits for; the data must be whole.
TEST(ThreadMultiple, PutsNbiAndHandlesFromEightThreads) {
    const int me = hgas_rank_me(), n = hgas_rank_n(), right = (me + 1) % n, left = (me + n - 1) % n;
    constexpr size_t slice = 3 * 4096;
    unsigned char *buf = nullptr;
    HGAS_OK_OR_FAIL(hgas_calloc(k_threads, slice, reinterpret_cast<void **>(&buf)));
    std::atomic<int> errors{0};
    on_threads(k_threads, [&](int t) {
        std::vector<unsigned char> src(slice);
        for (size_t i = 0; i < slice; ++i) src[i] = pattern(me * k_threads + t, right, i);
        unsigned char *mine = buf + t * slice;
        const size_t third = slice / 3;
        if (hgas_put(gp(mine, right), src.data(), third) != HGAS_OK) ++errors;
        if (hgas_put_nbi(gp(mine + third, right), src.data() + third, third) != HGAS_OK) ++errors;
        hgas_handle_t h = nullptr;
        if (hgas_put_nb(gp(mine + 2 * third, right), src.data() + 2 * third, third, &h) != HGAS_OK) ++errors;
        if (hgas_wait(h) != HGAS_OK) ++errors;
        if (hgas_quiet() != HGAS_OK) ++errors;
    });
    EXPECT_EQ(errors.load(), 0) << hgas_last_error();
    HGAS_OK_OR_FAIL(hgas_barrier());
    size_t bad = 0;
    for (int t = 0; t < k_threads; ++t)
        for (size_t i = 0; i < slice; ++i)
            if (buf[t * slice + i] != pattern(left * k_threads + t, me, i)) ++bad;
    EXPECT_EQ(bad, 0u) << "bytes wrong on rank " << me;
    HGAS_OK_OR_FAIL(hgas_barrier());
    HGAS_OK_OR_FAIL(hgas_free(buf));
}

// Regression: a thread in hgas_signal_wait_until held the rank's API lock for the whole wait,
// so the thread that was to set the signal (of the same rank) could never call hgas.
TEST(ThreadMultiple, SignalWaitLetsOtherThreadsOfTheRankCall) {
    const int me = hgas_rank_me();
    uint64_t *sig = nullptr;
    HGAS_OK_OR_FAIL(hgas_calloc(2, sizeof(uint64_t), reinterpret_cast<void **>(&sig)));
    std::atomic<bool> waiting{false};
    hgas_status_t waited = HGAS_OK, signalled = HGAS_OK;
    std::thread waiter = for_this_rank([&] {
        waiting.store(true);
        waited = hgas_signal_wait_until(sig, HGAS_CMP_EQ, 7, nullptr);
    });
    std::thread setter = for_this_rank([&] {
        while (!waiting.load()) std::this_thread::yield();
        const uint64_t payload = 42;
        signalled = hgas_put_signal(gp(&sig[1], me), &payload, sizeof payload, gp(sig, me), 7, HGAS_SIGNAL_SET);
    });
    waiter.join();
    setter.join();
    EXPECT_EQ(waited, HGAS_OK) << hgas_last_error();
    EXPECT_EQ(signalled, HGAS_OK) << hgas_last_error();
    EXPECT_EQ(__atomic_load_n(sig, __ATOMIC_ACQUIRE), 7u);
    EXPECT_EQ(sig[1], 42u);
    HGAS_OK_OR_FAIL(hgas_barrier());
    HGAS_OK_OR_FAIL(hgas_free(sig));
}

// Regression: a thread in hgas_barrier held the lock, so another thread of its rank could not
// send what rank 0 waits for before rank 0 enters the barrier itself.
TEST(ThreadMultiple, BarrierLetsOtherThreadsOfTheRankCall) {
    const int me = hgas_rank_me(), n = hgas_rank_n();
    uint64_t *arrived = nullptr;
    HGAS_OK_OR_FAIL(hgas_calloc(1, sizeof(uint64_t), reinterpret_cast<void **>(&arrived)));
    std::atomic<bool> in_barrier{false};
    hgas_status_t b = HGAS_OK, other = HGAS_OK;
    if (me == 0) {
        // Rank 0 enters the barrier only once every other rank's second thread has called.
        other = hgas_signal_wait_until(arrived, HGAS_CMP_GE, static_cast<uint64_t>(n - 1), nullptr);
        b = hgas_barrier();
    } else {
        std::thread barrier_thread = for_this_rank([&] {
            in_barrier.store(true);
            b = hgas_barrier();
        });
        while (!in_barrier.load()) std::this_thread::yield();
        other = hgas_atomic_add64(gp(arrived, 0), 1);
        barrier_thread.join();
    }
    EXPECT_EQ(b, HGAS_OK) << hgas_last_error();
    EXPECT_EQ(other, HGAS_OK) << hgas_last_error();
    HGAS_OK_OR_FAIL(hgas_barrier());
    HGAS_OK_OR_FAIL(hgas_free(arrived));
}

// A thread waiting for a handle lets the others run, and a handle waited by its thread is
// consumed once.
TEST(ThreadMultiple, HandleWaitsFromManyThreads) {
    const int me = hgas_rank_me(), n = hgas_rank_n();
    int64_t *words = nullptr;
    HGAS_OK_OR_FAIL(hgas_calloc(k_threads, sizeof(int64_t), reinterpret_cast<void **>(&words)));
    std::atomic<int> errors{0};
    on_threads(k_threads, [&](int t) {
        for (int i = 0; i < 50; ++i) {
            const int64_t v = int64_t{me} * 1000000 + t * 1000 + i;
            hgas_handle_t h = nullptr;
            if (hgas_put_nb(gp(&words[t], (me + 1) % n), &v, sizeof v, &h) != HGAS_OK) ++errors;
            if (hgas_wait(h) != HGAS_OK) ++errors;
            int done = 0;
            if (hgas_test(h, &done) != HGAS_OK || !done) ++errors;  // consumed: reported done
        }
    });
    EXPECT_EQ(errors.load(), 0) << hgas_last_error();
    HGAS_OK_OR_FAIL(hgas_barrier());
    const int left = (me + n - 1) % n;
    for (int t = 0; t < k_threads; ++t) EXPECT_EQ(words[t], int64_t{left} * 1000000 + t * 1000 + 49);
    HGAS_OK_OR_FAIL(hgas_barrier());
    HGAS_OK_OR_FAIL(hgas_free(words));
}

// hgas_thread_attach: an attached thread is its rank (the same number, the same memory); the
// rank's own thread cannot attach, a made-up handle is refused, and hgas_finalize is refused
// while a thread is attached and on an attached thread, leaving the rank as it was.
TEST(ThreadMultiple, AttachedThreadActsForItsRank) {
    const int me = hgas_rank_me(), n = hgas_rank_n(), left = (me + n - 1) % n;
    int64_t *word = nullptr;
    HGAS_OK_OR_FAIL(hgas_calloc(1, sizeof(int64_t), reinterpret_cast<void **>(&word)));
    EXPECT_EQ(hgas_thread_attach(hgas_rank_self()), HGAS_ERR_ALREADY_INITIALIZED);
    EXPECT_NE(std::strstr(hgas_last_error(), "called hgas_init for rank"), nullptr) << hgas_last_error();
    const hgas_rank_handle_t self = hgas_rank_self();
    ASSERT_NE(self, nullptr);
    std::atomic<int> step{0};
    hgas_status_t bogus = HGAS_OK, attached = HGAS_OK, fin = HGAS_OK;
    std::string bogus_msg, fin_msg;
    int before = -2, after = -2;
    std::thread helper([&] {
        before = hgas_rank_me();  // the process's sole rank, or none with rank threads
        int not_a_rank = 0;
        bogus = hgas_thread_attach(reinterpret_cast<hgas_rank_handle_t>(&not_a_rank));
        bogus_msg = hgas_last_error();
        attached = hgas_thread_attach(self);
        after = hgas_rank_me();
        const int64_t v = 1000 + me;
        EXPECT_EQ(hgas_put(gp(word, (me + 1) % n), &v, sizeof v), HGAS_OK) << hgas_last_error();
        EXPECT_EQ(hgas_quiet(), HGAS_OK) << hgas_last_error();
        fin = hgas_finalize();
        fin_msg = hgas_last_error();
        step.store(1);
        while (step.load() != 2) std::this_thread::yield();
        EXPECT_EQ(hgas_thread_attach(nullptr), HGAS_OK) << hgas_last_error();
    });
    while (step.load() != 1) std::this_thread::yield();
    EXPECT_EQ(hgas_finalize(), HGAS_ERR_UNSUPPORTED);  // the helper is still attached
    EXPECT_NE(std::strstr(hgas_last_error(), "1 thread(s) are still attached to rank"), nullptr) << hgas_last_error();
    step.store(2);
    helper.join();
    EXPECT_EQ(bogus, HGAS_ERR_INVALID_ARG);
    EXPECT_NE(bogus_msg.find("not a live rank of this process"), std::string::npos) << bogus_msg;
    EXPECT_EQ(attached, HGAS_OK);
    const char *t = std::getenv("HGAS_THREADS");
    EXPECT_EQ(before, t && std::atoi(t) > 1 ? -1 : me);  // a rank thread's helper has no rank of its own
    EXPECT_EQ(after, me);
    EXPECT_EQ(fin, HGAS_ERR_UNSUPPORTED);
    EXPECT_NE(fin_msg.find("acts for rank"), std::string::npos) << fin_msg;
    EXPECT_EQ(hgas_initialized(), 1);  // neither refused finalize touched the rank
    HGAS_OK_OR_FAIL(hgas_barrier());
    EXPECT_EQ(*word, 1000 + left);
    HGAS_OK_OR_FAIL(hgas_barrier());
    HGAS_OK_OR_FAIL(hgas_free(word));
}
