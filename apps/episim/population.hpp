// The synthetic population: locations on a grid, persons with one daily schedule each, and
// the partition of both over ranks. Everything here is a function of the seed and the ids,
// never of the number of ranks, except which rank owns what.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "model.hpp"

namespace episim {

enum class scenario { grid, one_location };

struct Config {
    scenario scen = scenario::grid;
    uint64_t persons = 20000;
    uint32_t gx = 40, gy = 40;       // location grid (one_location: 1 x 1)
    double visits = 5.0;             // visits per person per day ~ Poisson
    double hops = 5.2;               // Manhattan hops from home ~ Poisson
    uint32_t sublocs = 4;            // sub-locations per location
    double initial = 10;             // expected initially infectious persons (grid)
    uint64_t infectious = 5;         // one_location: persons 0 .. infectious-1 start infectious
    double latent_days = 2.0;        // mean of the E dwell (days, at least 1)
    double infectious_days = 4.0;    // mean of the I dwell (days, at least 1)
    uint32_t days = 30;
    Params p{1, 1.0, 1.0, 1.0, 1.0};
    uint64_t locations() const { return uint64_t(gx) * gy; }
};

// Block partition: rank r owns locations [loc_begin[r], loc_begin[r+1]) and persons
// [person_begin[r], person_begin[r+1]). Grid: a person's home is location p*L/N, so the
// persons whose home a rank owns form a block of ids and every home is in its person's
// partition. one_location: persons in blocks of ids, the location on rank 0.
struct Partition {
    int ranks = 1;
    std::vector<uint64_t> loc_begin, person_begin;
    Partition(const Config &c, int ranks);
    int loc_owner(uint64_t loc) const;
    int person_owner(uint64_t person) const;
};

uint64_t home_of(const Config &c, uint64_t person);

// Daily schedules of persons [first, last): visits[offset[p-first] .. offset[p-first+1]),
// each with person, loc, subloc, start, end (state filled in each day).
struct Schedules {
    std::vector<uint64_t> offset;
    std::vector<Visit> visits;
};
Schedules make_schedules(const Config &c, uint64_t first, uint64_t last);

// Dwell in days (at least 1) of person p entering state E or I on `day`.
uint32_t dwell(const Config &c, uint64_t purpose, uint64_t person, uint32_t day);
// Whether person p is infectious at the start (grid scenario).
bool initially_infectious(const Config &c, uint64_t person);

}  // namespace episim
