// Teams: ordered subsets of the job's ranks that collectives run over (hgas_team_t).
//
// Every rank keeps a table of the teams it belongs to. A team owns one slot of the rank's
// collective signal words (internal().coll_flags: coll_team_slots blocks of coll_team_words
// words), the same slot on every member, and its own collective epoch; so collectives on
// different teams never share a word, and a rank may be in any number of overlapping teams
// (at most coll_team_slots at once). The collective scratch is shared: a peer writes into a
// rank's scratch only once that rank has entered the collective on the team (its w_entered
// word of the team's slot), and every rank waits in a collective for all that is sent to it,
// so a rank in two teams never has data of both in its scratch at once. README.md has the rest.
#pragma once
#include <hgas/hgas.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/rank.hpp"

namespace hgas::coll {

// Slots of the predefined teams; splits take the lowest slot free on all their members.
enum : int { slot_world = 0, slot_node = 1, slot_gpu = 2, first_split_slot = 3 };

struct team {
    hgas_team_t id = HGAS_TEAM_INVALID;
    std::vector<int> ranks;        // job rank of each member, in team order
    int me = -1;                   // this rank's index in the team
    int slot = -1;                 // its block of signal words
    uint64_t own_epoch = 0;        // collectives of this team entered by this rank (not world)
    uint64_t *epoch = &own_epoch;  // the world team counts in internal().coll_epoch
    uint64_t barrier_epoch = 0;    // team barriers entered (the world uses sync::barrier)
    uint64_t kernel_epoch = 0;     // stream-ordered one-kernel collectives called (coll/direct.cpp)
    uint64_t blocking_epoch = 0;   // blocking one-kernel allreduces called
    uint64_t group_epoch = 0;      // stream-ordered collectives of rank threads met on the host (direct.cpp)
    bool world = false;            // every rank, in job order
    core::rank *r = nullptr;

    int n() const { return static_cast<int>(ranks.size()); }
    int rank_of(int i) const { return ranks[static_cast<size_t>(i)]; }
    // Symmetric offset of word `w` of this team's slot.
    uint64_t word_off(int w) const {
        return r->internal().coll_flags +
               64 * (uint64_t{core::internal_objects::coll_team_words} * static_cast<uint64_t>(slot) +
                     static_cast<uint64_t>(w));
    }
    // "team 5 (3 ranks)" for messages; "the world team" for the world.
    std::string describe() const;
};

/// The world team of `r` (always valid while the rank lives).
team &world(core::rank &r);
/// The live team behind `id` on this rank, or a failure naming `op` (an id that never
/// existed, a destroyed team, or one this rank is not a member of).
result<team *> find(core::rank &r, const char *op, hgas_team_t id);
/// As find, or nullptr without a message (for the queries that answer -1).
team *lookup(core::rank &r, hgas_team_t id);

/// hgas_team_split_strided: collective over `parent`; members start + i*stride (i < size)
/// form the new team in that order; *out is HGAS_TEAM_INVALID on the other ranks. Every
/// rank of the parent must pass the same (start, stride, size): checked, and a mismatch
/// fails on every rank.
status split_strided(core::rank &r, hgas_team_t parent, int start, int stride, int size, hgas_team_t *out);
/// hgas_team_split_2d: the parent laid out in rows of `xrange` ranks (the last may be
/// short); *xteam is this rank's row, *yteam its column (OpenSHMEM 1.5 semantics).
status split_2d(core::rank &r, hgas_team_t parent, int xrange, hgas_team_t *xteam, hgas_team_t *yteam);
/// Collective over the team: waits for every member, then frees the team's slot.
status destroy(core::rank &r, hgas_team_t id);
/// Waits for every member of the team (quiets first).
status team_barrier(team &t);

}  // namespace hgas::coll
