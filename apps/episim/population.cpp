#include "population.hpp"

#include <algorithm>
#include <cmath>

namespace episim {
namespace {

// A sequence of uniforms for one (purpose, person, day): draw(k) is the k-th.
struct Draws {
    uint64_t seed, purpose, person, day;
    uint64_t k = 0;
    double next() { return to_unit(key_hash(seed, purpose, person, day, k++)); }
    uint64_t below(uint64_t n) { return key_hash(seed, purpose, person, day, k++) % n; }
};

// Knuth's product-of-uniforms Poisson sampler (means up to a few tens).
uint32_t poisson(Draws &d, double mean) {
    if (mean <= 0) return 0;
    const double limit = std::exp(-mean);
    uint32_t k = 0;
    double prod = d.next();
    while (prod > limit) {
        ++k;
        prod *= d.next();
    }
    return k;
}

}  // namespace

Partition::Partition(const Config &c, int r) : ranks(r), loc_begin(r + 1), person_begin(r + 1) {
    const uint64_t L = c.locations(), N = c.persons;
    for (int i = 0; i <= r; ++i) {
        if (c.scen == scenario::grid) {
            loc_begin[i] = L * uint64_t(i) / uint64_t(r);
            // the first person whose home p*L/N is >= loc_begin[i]: ceil(loc_begin[i]*N/L)
            person_begin[i] = (loc_begin[i] * N + L - 1) / L;
        } else {
            loc_begin[i] = i == 0 ? 0 : L;
            person_begin[i] = N * uint64_t(i) / uint64_t(r);
        }
    }
}

static int block_owner(const std::vector<uint64_t> &begin, uint64_t x) {
    // the last r with begin[r] <= x (empty blocks are skipped: they share a begin)
    return int(std::upper_bound(begin.begin(), begin.end() - 1, x) - begin.begin()) - 1;
}
int Partition::loc_owner(uint64_t loc) const { return block_owner(loc_begin, loc); }
int Partition::person_owner(uint64_t person) const { return block_owner(person_begin, person); }

uint64_t home_of(const Config &c, uint64_t person) {
    return c.scen == scenario::grid ? person * c.locations() / c.persons : 0;
}

Schedules make_schedules(const Config &c, uint64_t first, uint64_t last) {
    Schedules s;
    s.offset.reserve(last - first + 1);
    s.offset.push_back(0);
    std::vector<uint32_t> times;
    for (uint64_t p = first; p < last; ++p) {
        if (c.scen == scenario::one_location) {  // all day at the one location
            s.visits.push_back(Visit{uint32_t(p), 0, 0, DAY_SECONDS, 0, S, 0});
            s.offset.push_back(s.visits.size());
            continue;
        }
        Draws d{c.p.seed, P_SCHEDULE, p, 0};
        const uint32_t n = poisson(d, c.visits);
        times.resize(2 * size_t(n));
        for (auto &t : times) t = uint32_t(d.below(DAY_SECONDS));
        std::sort(times.begin(), times.end());
        const uint64_t home = home_of(c, p);
        for (uint32_t v = 0; v < n; ++v) {
            int64_t x = int64_t(home % c.gx), y = int64_t(home / c.gx);
            const uint32_t hops = poisson(d, c.hops);
            for (uint32_t h = 0; h < hops; ++h) {
                const uint64_t dir = d.below(4);
                int64_t dx = dir == 0 ? 1 : dir == 1 ? -1 : 0, dy = dir == 2 ? 1 : dir == 3 ? -1 : 0;
                // a step off the grid goes the other way (a 1-wide grid stays put)
                if (x + dx < 0 || x + dx >= int64_t(c.gx)) dx = -dx;
                if (y + dy < 0 || y + dy >= int64_t(c.gy)) dy = -dy;
                if (x + dx >= 0 && x + dx < int64_t(c.gx)) x += dx;
                if (y + dy >= 0 && y + dy < int64_t(c.gy)) y += dy;
            }
            const uint16_t sub = uint16_t(d.below(c.sublocs));
            s.visits.push_back(Visit{uint32_t(p), uint32_t(y * c.gx + x), times[2 * v], times[2 * v + 1], sub, S, 0});
        }
        s.offset.push_back(s.visits.size());
    }
    return s;
}

uint32_t dwell(const Config &c, uint64_t purpose, uint64_t person, uint32_t day) {
    Draws d{c.p.seed, purpose, person, day};
    const double mean = purpose == P_LATENT ? c.latent_days : c.infectious_days;
    return 1 + poisson(d, mean - 1);
}

bool initially_infectious(const Config &c, uint64_t person) {
    return to_unit(key_hash(c.p.seed, P_INITIAL, person)) < c.initial / double(c.persons);
}

}  // namespace episim
