// progress_sleep_us (progress_wait.hpp): the sleeps of mode device's host while its kernel runs.
// Simulates runs on a virtual clock and checks the wake-ups and how late the end is seen.
#include "progress_wait.hpp"

#include <cstdio>

static int failures = 0;
#define EXPECT(c)                                                                      \
    do {                                                                               \
        if (!(c)) {                                                                    \
            std::fprintf(stderr, "progress_wait_test:%d: failed: %s\n", __LINE__, #c); \
            ++failures;                                                                \
        }                                                                              \
    } while (0)

// A run of `total` sweeps that starts `t_start` seconds after the wait does (the launch), the
// first `slow` sweeps taking `t_slow` seconds each and the rest `t_fast`, waited for as
// wait_event_progress does (progress_pacer): returns the wake-ups, and in *late how long after
// the last sweep the host saw it.
static int simulate(long long total, double t_slow, double t_fast, long long slow, int poll_us, double *late,
                    double t_start = 0) {
    const double end = t_start + slow * t_slow + (total - slow) * t_fast;
    himeno::progress_pacer pace{total, poll_us};
    double t = 0;
    int wakes = 0;
    for (;;) {
        ++wakes;
        if (t >= end) {
            *late = t - end;
            return wakes;
        }
        const double r = t - t_start;
        const long long done = r < 0               ? 0
                               : r < slow * t_slow ? (long long)(r / t_slow)
                                                   : slow + (long long)((r - slow * t_slow) / t_fast);
        const long long s = pace.sleep_us(t, done);
        EXPECT(s >= poll_us && s <= 50000);
        t += s * 1e-6;
    }
}

int main() {
    // Before the first sweep, when done, and on odd input: the poll interval.
    EXPECT(himeno::progress_sleep_us(0.5, 0, 4000, 500) == 500);
    EXPECT(himeno::progress_sleep_us(0.5, 4000, 4000, 500) == 500);
    EXPECT(himeno::progress_sleep_us(0.0, 10, 4000, 500) == 500);
    EXPECT(himeno::progress_sleep_us(0.5, 10, 4000, 0) > 0);
    EXPECT(himeno::progress_sleep_us(0.5, 5, 4000, -3) >= 0);
    // A quarter of what is left: 1000 of 4000 in 0.5 s leaves 1.5 s, a quarter is 375 ms, capped.
    EXPECT(himeno::progress_sleep_us(0.5, 1000, 4000, 500) == 50000);
    // 3900 of 4000 in 1.95 s leaves 50 ms: 12.5 ms.
    EXPECT(himeno::progress_sleep_us(1.95, 3900, 4000, 500) == 12500);
    // Less than 4 polls left: the poll interval.
    EXPECT(himeno::progress_sleep_us(1.999, 3999, 4000, 500) == 500);

    double late = 0;
    // Mode device at size L on an H200: 4000 sweeps of 0.475 ms. Polling every 500 us woke the
    // host about 3800 times; here a few dozen, and the end is seen within one poll.
    int w = simulate(4000, 475e-6, 475e-6, 0, 500, &late);
    std::printf("steady 4000 x 0.475 ms: %d wake-ups, end seen %.0f us late\n", w, late * 1e6);
    EXPECT(w < 100);
    EXPECT(late <= 500e-6 + 1e-9);
    // A run that speeds up fourfold after its first 100 sweeps is not overslept either.
    w = simulate(4000, 1.9e-3, 0.475e-3, 100, 500, &late);
    std::printf("4x faster after 100 sweeps: %d wake-ups, end seen %.0f us late\n", w, late * 1e6);
    EXPECT(w < 150);
    EXPECT(late <= 500e-6 + 1e-9);
    // A launch that takes 20 ms before the first sweep: the rate counts from the first sweep
    // seen, so the start-up does not make the host oversleep the end.
    w = simulate(4000, 475e-6, 475e-6, 0, 500, &late, 0.020);
    std::printf("20 ms start-up, then 4000 x 0.475 ms: %d wake-ups, end seen %.0f us late\n", w, late * 1e6);
    EXPECT(w < 150);
    EXPECT(late <= 500e-6 + 1e-9);
    // A short run: no worse than polling.
    w = simulate(3, 475e-6, 475e-6, 0, 500, &late);
    EXPECT(late <= 500e-6 + 1e-9);
    if (failures) return 1;
    std::printf("progress_wait_test: all checks passed\n");
    return 0;
}
