// How long the host sleeps while a run on the GPU reports its progress (mode device): a run of
// thousands of sweeps is then waited for with a few dozen wake-ups, not one every --poll-us,
// and its end is still seen within --poll-us as long as the sweeps do not speed up more than
// fourfold (progress_pacer counts the rate from the first finished sweep it sees, so the
// launch's start-up does not make the rate look slower than it is).
#pragma once

namespace himeno {

/// Microseconds to sleep before looking again, `elapsed_s` after the run started, when the GPU
/// has finished `done` of `total` sweeps: a quarter of the time the rest should take at the
/// rate so far (so a run that speeds up by up to four times is not overslept), at least
/// `poll_us`, at most 50 ms (hgas progress is made at every wake-up). Before the first sweep,
/// and once less than 4 * poll_us is left, `poll_us`.
inline long long progress_sleep_us(double elapsed_s, long long done, long long total, int poll_us) {
    const long long floor_us = poll_us > 0 ? poll_us : 0;
    if (done <= 0 || done >= total || elapsed_s <= 0) return floor_us;
    const double left_us = elapsed_s * 1e6 / double(done) * double(total - done);
    const double s = left_us / 4;
    if (s <= double(floor_us)) return floor_us;
    return s > 50000.0 ? 50000 : static_cast<long long>(s);
}

/// The sleeps of one wait, `total` sweeps: the rate counts from the first finished sweep it is
/// shown (time `t` in seconds, `done` sweeps), not from the launch.
struct progress_pacer {
    long long total;
    int poll_us;
    long long first_done = 0;
    double first_t = 0;
    long long sleep_us(double t, long long done) {
        if (done > 0 && first_done == 0) first_done = done, first_t = t;
        if (first_done == 0) return poll_us > 0 ? poll_us : 0;
        return progress_sleep_us(t - first_t, done - first_done, total - first_done, poll_us);
    }
};

}  // namespace himeno
