// Mode cpu: the rank's slab on the CPU, computed by a thread team; halos exchanged with
// put-with-signal into buffers of --kind (host, sim or cuda memory).
#include <hgas/hgas.h>

#include <algorithm>
#include <new>
#include <optional>
#include <thread>
#include <vector>

#include "halo.hpp"
#include "modes.hpp"
#include "rank_launch.hpp"
#include "slab.hpp"

namespace himeno {
namespace {

// Polls hgas progress from team member 0 while the interior is computed, so that transports
// that need this rank's CPU (UCX over TCP, active messages) move the halos meanwhile.
struct progress_poller final : poller {
    explicit progress_poller(int us) : period(us * 1e-6), next(now() + period) {}
    void tick() override {
        const double t = now();
        if (t < next) return;
        hgas_progress();
        next = t + period;
    }
    double period, next;
};

// CPU time of this rank: its process's (cpu_seconds) with one rank per process; with rank
// threads the process is shared, so the sum of the rank's team members' own times.
double rank_cpu_seconds(team &t) {
    if (apps::ranks_per_process() <= 1) return cpu_seconds();
    std::vector<double> each(static_cast<size_t>(t.size()), 0.0);
    t.run([&each](int m) { each[static_cast<size_t>(m)] = cpu_seconds(); });
    double sum = 0;
    for (double c : each) sum += c;
    return sum;
}

result run(const options &o, slab &s, team &t, bool exchange, gpu_energy &energy) {
    const int me = hgas_rank_me(), n = hgas_rank_n(), nl = s.planes();
    const bool has_lo = exchange && me > 0, has_hi = exchange && me < n - 1;
    std::vector<double> sums(nl);
    auto gosa = [&] {
        for (int l = 1; l <= nl; ++l) sums[l - 1] = s.plane_gosa(l);
        return combine_gosa(o.mimax, s.lo(), nl, sums.data());
    };
    std::optional<halo> h;  // collective allocation: every rank has the same `exchange`
    if (exchange) h.emplace(o.kind, s.plane_floats(), me);
    progress_poller poll(o.poll_us);
    s.init();
    result r;

    check(hgas_barrier(), "hgas_barrier");
    const double t0 = now(), c0 = rank_cpu_seconds(t), e0 = energy.read_joules();
    for (int it = 0; it < o.iters; ++it) {
        // Boundary planes first, so their new values travel while the interior is computed.
        s.sweep(t, 1, 2);
        if (nl > 1) s.sweep(t, nl, nl + 1);
        if (has_lo) h->send(me - 1, 1, it, s.wrk2_plane(1));
        if (has_hi) h->send(me + 1, 0, it, s.wrk2_plane(nl));
        if (nl > 2) s.sweep(t, 2, nl, o.poll_us > 0 && (has_lo || has_hi) ? &poll : nullptr);
        if (has_lo || has_hi) check(hgas_quiet(), "hgas_quiet");  // wrk2 planes are rewritten next sweep
        if (has_lo) s.set_halo(0, h->receive(0, it));
        if (has_hi) s.set_halo(nl + 1, h->receive(1, it));
        s.commit(t);
        if (exchange) r.gosa = gosa();
    }
    const double t1 = now(), c1 = rank_cpu_seconds(t), e1 = energy.read_joules();
    if (!exchange) r.gosa = gosa();

    const double mine = t1 - t0;
    check(hgas_allreduce(&r.seconds, &mine, 1, HGAS_DOUBLE, HGAS_OP_MAX), "hgas_allreduce");
    r.cpu_per_iter = (c1 - c0) / o.iters;
    const double de = energy_delta(energy, e0, e1);
    check(hgas_allreduce(&r.energy_j, &de, 1, HGAS_DOUBLE, HGAS_OP_SUM), "hgas_allreduce");
    return r;
}

}  // namespace

int run_cpu(const options &o, run_output &out) {
    const int me = hgas_rank_me(), n = hgas_rank_n();
    const int local_n = hgas_local_n() > 0 ? hgas_local_n() : 1;
    out.threads = o.threads ? o.threads : std::max(1, int(std::thread::hardware_concurrency()) / local_n);
    int lo, hi;
    split_planes(o.mimax, n, me, &lo, &hi);
    std::optional<slab> s;
    try {
        s.emplace(o.mimax, o.mjmax, o.mkmax, lo, hi);
    } catch (const std::bad_alloc &) {
        die("himeno: not enough memory for " + std::to_string(hi - lo + 2) + " planes of " + std::to_string(o.mjmax) +
            "x" + std::to_string(o.mkmax) + " points x 14 arrays (" +
            std::to_string((hi - lo + 2) * 56.0 * o.mjmax * o.mkmax / (1 << 30)) +
            " GiB): use more ranks or a smaller size");
    }
    team t(out.threads);
    gpu_energy energy(hgas_local_rank());
    out.energy = agree_energy(energy);

    out.main = run(o, *s, t, o.exchange, energy);
    if (o.checksum)
        field_checksum(o.mimax, lo, hi - lo, s->plane_floats(), [&](int l) { return s->p_plane(l); }, &out.sum,
                       &out.hash);
    if (o.overhead) out.bare = run(o, *s, t, false, energy);
    return 0;
}

}  // namespace himeno
