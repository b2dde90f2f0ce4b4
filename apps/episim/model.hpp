// The epidemic model's records and its random draws: everything the CPU code and the CUDA
// kernels must compute identically, as inline functions both compile (EPI_HD).
//
// Draws come from a counter-based generator: a uniform number is a hash of (seed, what it is
// for, the ids it concerns), never the next value of a sequential stream. A contact's
// outcome is therefore the same whichever rank evaluates it and in whichever order, which is
// what makes the epidemic curve independent of the number of ranks.
#pragma once
#include <cmath>
#include <cstdint>

#ifdef __CUDACC__
#define EPI_HD __host__ __device__ __forceinline__
#else
#define EPI_HD inline
#endif

namespace episim {

constexpr uint32_t DAY_SECONDS = 86400;

enum : uint8_t { S = 0, E = 1, I = 2, R = 3 };

// One visit message: a person (in state S or I that day) at a location, sub-location, for
// [start, end) seconds of the day. 20 bytes, no padding: it is sent as raw bytes.
struct Visit {
    uint32_t person;
    uint32_t loc;
    uint32_t start;
    uint32_t end;
    uint16_t subloc;
    uint8_t state;  // S or I
    uint8_t pad;
};
static_assert(sizeof(Visit) == 20, "Visit travels as 20 raw bytes");

// One infection message, location owner -> the susceptible person's owner.
struct Infection {
    uint32_t person;    // the susceptible person infected
    uint32_t infector;  // the infectious person of the contact
    uint32_t loc;
    uint32_t pad;
};
static_assert(sizeof(Infection) == 16, "Infection travels as 16 raw bytes");

// Model parameters the interaction kernels need (plain data, copied to the GPU by value).
struct Params {
    uint64_t seed;
    double tau;          // transmissibility per day of full overlap
    double contact_p;    // probability that two overlapping visitors are in contact
    double susc;         // susceptibility of every person
    double inf;          // infectivity of every person
};

// SplitMix64's finalizer: a bijective 64-bit mix with good avalanche.
EPI_HD uint64_t mix64(uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}
// Hash of a key of up to five words, chained so that every word changes the result.
EPI_HD uint64_t key_hash(uint64_t seed, uint64_t a, uint64_t b = 0, uint64_t c = 0, uint64_t d = 0,
                         uint64_t e = 0) {
    uint64_t h = mix64(seed ^ 0x5851f42d4c957f2dull);
    h = mix64(h ^ a);
    h = mix64(h ^ b);
    h = mix64(h ^ c);
    h = mix64(h ^ d);
    return mix64(h ^ e);
}
// Uniform in [0, 1) from the top 53 bits.
EPI_HD double to_unit(uint64_t h) { return double(h >> 11) * (1.0 / 9007199254740992.0); }

// What a draw is for: part of every key, so that draws for different purposes never coincide.
enum Purpose : uint64_t {
    P_CONTACT = 1,
    P_SCHEDULE = 2,
    P_INITIAL = 3,
    P_LATENT = 4,
    P_INFECTIOUS = 5,
};

// The draw of one contact: susceptible visit (person s, starting at s_start) meets infectious
// visit (person i, starting at i_start) at location loc on `day`. The key is (day, person,
// location, other person) plus the two visits' start times, so that two separate meetings
// of the same pair at one location are separate contacts.
EPI_HD bool contact_infects(const Params &p, uint32_t day, const Visit &s, const Visit &i, uint32_t overlap) {
    const double prop = p.tau * double(overlap) * p.susc * p.inf / double(DAY_SECONDS);
    const double prob = p.contact_p * (1.0 - exp(-prop));
    const uint64_t h = key_hash(p.seed, P_CONTACT, day, (uint64_t(s.person) << 32) | s.loc,
                                (uint64_t(i.person) << 32) | s.subloc, (uint64_t(s.start) << 32) | i.start);
    return to_unit(h) < prob;
}

// Order of visits on a location's owner: by location, sub-location, start, then person (a
// total order: the sorted array is the same whatever order the fragments arrived in).
EPI_HD bool visit_less(const Visit &a, const Visit &b) {
    if (a.loc != b.loc) return a.loc < b.loc;
    if (a.subloc != b.subloc) return a.subloc < b.subloc;
    if (a.start != b.start) return a.start < b.start;
    if (a.person != b.person) return a.person < b.person;
    return a.end < b.end;
}
EPI_HD bool same_room(const Visit &a, const Visit &b) { return a.loc == b.loc && a.subloc == b.subloc; }

// The infection (if any) of susceptible visit v[j] of a sorted visit array v[0, n): every
// infectious visit of the same room that overlaps it is one contact, drawn independently; of
// the contacts that infect, the one with the smallest (infector, start) is reported. `first`
// is the index of the room's first visit. Returns whether v[j] was infected, the record in *out.
EPI_HD bool infect_visit(const Params &p, uint32_t day, const Visit *v, uint64_t n, uint64_t first, uint64_t j,
                         Infection *out) {
    const Visit s = v[j];
    bool hit = false;
    Infection best{};
    for (uint64_t k = first; k < n && same_room(v[k], s) && v[k].start < s.end; ++k) {
        const Visit &i = v[k];
        if (i.state != I || i.end <= s.start) continue;
        const uint32_t lo = s.start > i.start ? s.start : i.start;
        const uint32_t hi = s.end < i.end ? s.end : i.end;
        if (hi <= lo || !contact_infects(p, day, s, i, hi - lo)) continue;
        if (!hit || i.person < best.infector) {
            best = Infection{s.person, i.person, s.loc, 0};
            hit = true;
        }
    }
    if (hit) *out = best;
    return hit;
}

EPI_HD bool infection_less(const Infection &a, const Infection &b) {
    if (a.person != b.person) return a.person < b.person;
    if (a.infector != b.infector) return a.infector < b.infector;
    return a.loc < b.loc;
}

}  // namespace episim
