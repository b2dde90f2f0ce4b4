// OpenSHMEM teams: the PE's team pool and team objects, the predefined teams, splits, PE
// translation, configuration, destruction and team_sync. Team collectives are in coll.cpp
// (over team_set()); contexts on teams in ctx.cpp.
//
// Synchronization words. A team's collectives synchronize over words that must be symmetric
// and used by nothing else at the same time, but a split is collective over the parent only,
// so it cannot allocate symmetric memory (shmem_malloc is collective over the world). So
// shmem_init allocates a pool of 64 slots of 8 words on every PE, and every PE keeps a mask of
// its free slots (in the pool too, so that others can read it). A split gives the new team
// the lowest slot that is free on all its members (the AND of their masks), so a slot is
// never used by two live teams that share a PE. Slot 0 is the world's, slot 1 the shared
// team's; teams that have no PE in common may use the same slot.
#include <algorithm>
#include <cstdio>
#include <set>

#include "internal.hpp"

namespace hgas::shmem {
namespace {

constexpr int k_slots = 64;       // bits of the free mask
constexpr int k_slot_longs = 8;   // words per slot: two pSync groups of 4
constexpr int k_split_words = 4;  // offset of the group that subsets use while splitting
static_assert(SHMEM_SYNC_SIZE >= 4, "a pSync group of a team slot holds 4 words");

// Everything the front end keeps per PE, attached to the hgas rank (hgas_rank_data).
struct pe_state {
    long *pool = nullptr;  // symmetric: one header line (the free mask), then the slots
    hgasi_shmem_team world, shared;
    std::set<hgasi_shmem_team *> live;  // teams made by splits and not destroyed
    reduce_area small_reduce;           // the world's small reductions (internal.hpp)
    uint64_t *free_mask() const { return reinterpret_cast<uint64_t *>(pool); }
    long *split_failures() const { return pool + 1; }  // counted on a parent's member 0
    long *slot(int i) const { return pool + k_slot_longs * (1 + i); }
};

const char k_state_key = 0;  // its address names the front end's data in the rank

void release_state(void *p) {
    auto *st = static_cast<pe_state *>(p);
    for (hgasi_shmem_team *t : st->live) delete t;
    delete st;  // the pool goes with the symmetric heap
}

pe_state *find_state() { return static_cast<pe_state *>(hgas_rank_data(&k_state_key)); }

pe_state &state(const char *fn) {
    pe_state *st = find_state();
    if (!st) fatal(fn, "called before shmem_init()");
    return *st;
}

// The live team behind `t`, or nullptr; no error before shmem_init (for the queries).
hgasi_shmem_team *find_team(shmem_team_t t) {
    pe_state *st = t == SHMEM_TEAM_INVALID ? nullptr : find_state();
    if (!st) return nullptr;
    if (t == SHMEM_TEAM_WORLD) return &st->world;
    if (t == SHMEM_TEAM_SHARED) return &st->shared;
    return st->live.count(t) ? t : nullptr;
}

bool is_world(const std::vector<int> &pes) {
    if (static_cast<int>(pes.size()) != hgas_rank_n()) return false;
    for (size_t i = 0; i < pes.size(); ++i)
        if (pes[i] != static_cast<int>(i)) return false;
    return true;
}

// The set of world PEs `members` (a subset of `parent`, this PE among them), synchronizing on
// the parent's split words.
active_set subset_of(const hgasi_shmem_team &parent, const std::vector<int> &members) {
    active_set s;
    s.size = static_cast<int>(members.size());
    s.list = members.data();
    s.world = is_world(members);
    s.psync = parent.words + k_split_words;
    const int me = hgas_rank_me();
    s.me = static_cast<int>(std::find(members.begin(), members.end(), me) - members.begin());
    return s;
}

// The lowest slot free on every member of `sub` (all of them call this), marked used on this
// PE; -1 if there is none. Every member computes the same answer: the masks are read between
// two barriers of the subset, while no member can change its own.
int take_common_slot(const char *fn, pe_state &st, const active_set &sub) {
    set_barrier(fn, sub);
    uint64_t common = ~0ull;
    for (int i = 0; i < sub.size; ++i) {
        uint64_t m = *st.free_mask();
        if (i != sub.me) {
            hgas_gptr_t g;
            check(fn, hgas_ptr(st.free_mask(), sub.pe(i), &g));
            check(fn, hgas_get(&m, g, sizeof m));
        }
        common &= m;
    }
    set_barrier(fn, sub);
    if (common == 0) return -1;
    const int slot = __builtin_ctzll(common);
    *st.free_mask() &= ~(1ull << slot);
    return slot;
}

// A team of `members` on slot `slot` (this PE among the members).
hgasi_shmem_team *make_team(pe_state &st, std::vector<int> members, int slot, const shmem_team_config_t *config,
                            long mask) {
    auto *t = new hgasi_shmem_team;
    t->me = static_cast<int>(std::find(members.begin(), members.end(), hgas_rank_me()) - members.begin());
    t->world = is_world(members);
    t->pes = std::move(members);
    t->slot = slot;
    t->words = st.slot(slot);
    if (config && (mask & SHMEM_TEAM_NUM_CONTEXTS)) t->config = *config;
    t->config_mask = mask;
    st.live.insert(t);
    return t;
}

// Checks a configuration argument; prints why and returns false if it is unusable.
bool config_ok(const char *fn, const char *which, const shmem_team_config_t *config, long mask) {
    if (mask & ~SHMEM_TEAM_NUM_CONTEXTS) {
        std::fprintf(stderr, "%s: %s mask 0x%lx has bits other than SHMEM_TEAM_NUM_CONTEXTS\n", fn, which, mask);
        return false;
    }
    if (mask && !config) {
        std::fprintf(stderr, "%s: %s mask 0x%lx names fields, but the configuration is NULL\n", fn, which, mask);
        return false;
    }
    if (mask && config->num_contexts < 0) {
        std::fprintf(stderr, "%s: %s num_contexts %d is negative\n", fn, which, config->num_contexts);
        return false;
    }
    return true;
}

void no_slot(const char *fn) {
    std::fprintf(stderr, "%s: PE %d has no team slot left that is free on every PE of the new team (at most %d "
                 "teams besides SHMEM_TEAM_WORLD and SHMEM_TEAM_SHARED); destroy teams that are no longer used\n",
                 fn, hgas_rank_me(), k_slots - 2);
}

// Ends a split on every PE of `parent` with one outcome: true if `failed` holds on any of them
// (a member that found no free slot), so that no PE of the parent returns 0 while another
// returns nonzero. Failing PEs count themselves on the parent's member 0, between barriers of
// the whole parent; member 0 resets the count before the last barrier lets anyone into a
// later split (whose failures it might otherwise lose).
bool agree_failed(const char *fn, pe_state &st, const hgasi_shmem_team &parent, bool failed) {
    const active_set all = team_set(parent);
    hgas_gptr_t count;
    check(fn, hgas_ptr(st.split_failures(), parent.pes[0], &count));
    if (failed) {
        const int64_t one = 1;
        check(fn, hgas_atomic(count, HGAS_AMO_ADD, HGAS_INT64, &one, nullptr, nullptr));
    }
    set_barrier(fn, all);  // quiets first: every count has arrived
    long total = 0;
    check(fn, hgas_get(&total, count, sizeof total));
    set_barrier(fn, all);
    if (parent.me == 0) *st.split_failures() = 0;
    set_barrier(fn, all);
    return total != 0;
}

// Undoes a team this PE made in a split that failed elsewhere: nothing used it yet.
void unmake_team(pe_state &st, shmem_team_t *team) {
    if (*team == SHMEM_TEAM_INVALID) return;
    *st.free_mask() |= 1ull << (*team)->slot;
    st.live.erase(*team);
    delete *team;
    *team = SHMEM_TEAM_INVALID;
}

}  // namespace

bool setup_teams(const char *fn) {
    if (find_state()) return false;
    auto *st = new pe_state;
    void *pool = nullptr;
    // Collective, like shmem_init: the same offset on every PE.
    check(fn, hgas_calloc(1 + k_slots, k_slot_longs * sizeof(long), &pool));
    st->pool = static_cast<long *>(pool);
    *st->free_mask() = ~0ull & ~1ull & ~2ull;  // slots 0 and 1: the predefined teams
    const int n = hgas_rank_n(), me = hgas_rank_me(), node = hgas_node_me();
    for (int r = 0; r < n; ++r) {
        st->world.pes.push_back(r);
        if (hgas_node_of(r) == node) st->shared.pes.push_back(r);
    }
    for (hgasi_shmem_team *t : {&st->world, &st->shared}) {
        t->me = static_cast<int>(std::find(t->pes.begin(), t->pes.end(), me) - t->pes.begin());
        t->world = is_world(t->pes);
        t->predefined = true;
        t->slot = t == &st->world ? 0 : 1;
        t->words = st->slot(t->slot);
        t->core = t == &st->world ? HGAS_TEAM_WORLD : HGAS_TEAM_NODE;
    }
    if (n >= 2 && n <= reduce_area::max_pes) {  // collective too: every PE sees the same n
        void *area = nullptr;
        check(fn, hgas_calloc(1, reduce_area::bytes(n), &area));
        st->small_reduce.base = static_cast<char *>(area);
    }
    check(fn, hgas_rank_data_set(&k_state_key, st, release_state));
    return true;
}

reduce_area *world_reduce_area() {
    pe_state *st = find_state();
    return st && st->small_reduce.base ? &st->small_reduce : nullptr;
}

void destroy_all_contexts(const char *fn) {
    pe_state *st = find_state();
    if (!st) return;
    std::vector<hgasi_shmem_team *> teams{&st->world, &st->shared};
    teams.insert(teams.end(), st->live.begin(), st->live.end());
    for (hgasi_shmem_team *t : teams)
        while (!t->contexts.empty()) destroy_ctx(fn, t->contexts.back());
}

hgasi_shmem_team *team_of(const char *fn, shmem_team_t t) {
    if (t == SHMEM_TEAM_INVALID) return nullptr;
    (void)state(fn);  // the error for a call before shmem_init
    return find_team(t);
}

int team_unavailable(const char *fn, shmem_team_t t) {
    if (t == SHMEM_TEAM_INVALID) std::fprintf(stderr, "%s: the team is SHMEM_TEAM_INVALID\n", fn);
    else std::fprintf(stderr, "%s: %p is not a team of this PE (destroyed, or not from a split)\n", fn,
                      static_cast<void *>(t));
    return 1;
}

active_set team_set(const hgasi_shmem_team &t) {
    active_set s;
    s.size = static_cast<int>(t.pes.size());
    s.list = t.pes.data();
    s.world = t.world;
    s.me = t.me;
    s.psync = t.words;
    return s;
}

}  // namespace hgas::shmem

using namespace hgas::shmem;

extern "C" {

int shmem_team_my_pe(shmem_team_t team) {
    const hgasi_shmem_team *t = find_team(team);
    return t ? t->me : -1;
}
int shmem_team_n_pes(shmem_team_t team) {
    const hgasi_shmem_team *t = find_team(team);
    return t ? static_cast<int>(t->pes.size()) : -1;
}

int shmem_team_sync(shmem_team_t team) {
    const char *fn = "shmem_team_sync";
    const hgasi_shmem_team *t = team_of(fn, team);
    if (!t) return team_unavailable(fn, team);
    check(fn, hgas_team_barrier(t->core));  // quiets first
    return 0;
}

int shmem_team_translate_pe(shmem_team_t src_team, int src_pe, shmem_team_t dest_team) {
    const hgasi_shmem_team *src = find_team(src_team), *dst = find_team(dest_team);
    if (!src || !dst || src_pe < 0 || src_pe >= static_cast<int>(src->pes.size())) return -1;
    const int world = src->pes[static_cast<size_t>(src_pe)];
    if (dst->world) return world;
    auto it = std::find(dst->pes.begin(), dst->pes.end(), world);
    return it == dst->pes.end() ? -1 : static_cast<int>(it - dst->pes.begin());
}

void *shmem_team_ptr(shmem_team_t team, const void *dest, int pe) {
    const hgasi_shmem_team *t = find_team(team);
    if (!t || pe < 0 || pe >= static_cast<int>(t->pes.size())) return nullptr;
    return shmem_ptr(dest, t->pes[static_cast<size_t>(pe)]);
}

int shmem_team_get_config(shmem_team_t team, long config_mask, shmem_team_config_t *config) {
    const char *fn = "shmem_team_get_config";
    const hgasi_shmem_team *t = team_of(fn, team);
    if (!t) return team_unavailable(fn, team);
    if (!config) {
        std::fprintf(stderr, "%s: config is NULL\n", fn);
        return 1;
    }
    if (config_mask & ~SHMEM_TEAM_NUM_CONTEXTS) {
        std::fprintf(stderr, "%s: mask 0x%lx has bits other than SHMEM_TEAM_NUM_CONTEXTS\n", fn, config_mask);
        return 1;
    }
    if (config_mask & SHMEM_TEAM_NUM_CONTEXTS)
        config->num_contexts = (t->config_mask & SHMEM_TEAM_NUM_CONTEXTS) ? t->config.num_contexts : 0;
    return 0;
}

int shmem_team_split_strided(shmem_team_t parent_team, int start, int stride, int size,
                             const shmem_team_config_t *config, long config_mask, shmem_team_t *new_team) {
    const char *fn = "shmem_team_split_strided";
    if (!new_team) fatal(fn, "new_team is NULL");
    *new_team = SHMEM_TEAM_INVALID;
    pe_state &st = state(fn);
    hgasi_shmem_team *parent = team_of(fn, parent_team);
    if (!parent) return parent_team == SHMEM_TEAM_INVALID ? 1 : team_unavailable(fn, parent_team);
    // Every member of the parent passes the same arguments, so all return here alike.
    const int psize = static_cast<int>(parent->pes.size());
    const long long last = start + static_cast<long long>(size - 1) * stride;
    if (size < 1 || stride < 1 || start < 0 || start >= psize || last >= psize) {
        std::fprintf(stderr, "%s: (start=%d, stride=%d, size=%d) is not a subset of the parent team's %d PEs: size "
                     "and stride must be >= 1, and start .. start+(size-1)*stride inside 0 .. %d\n",
                     fn, start, stride, size, psize, psize - 1);
        return 1;
    }
    if (!config_ok(fn, "the", config, config_mask)) return 1;
    std::vector<int> members;
    for (int i = 0; i < size; ++i) members.push_back(parent->pes[static_cast<size_t>(start + i * stride)]);
    const int rel = parent->me - start;
    const bool member = rel >= 0 && rel % stride == 0 && rel / stride < size;
    int rc = 0;
    if (member) {
        const int slot = take_common_slot(fn, st, subset_of(*parent, members));
        if (slot < 0) {
            no_slot(fn);
            rc = 1;
        } else {
            *new_team = make_team(st, std::move(members), slot, config, config_mask);
        }
    }
    // The split words of the parent are free again when every member of it is here, and every
    // PE of the parent returns the same status.
    if (agree_failed(fn, st, *parent, rc != 0)) {
        unmake_team(st, new_team);
        if (rc == 0) std::fprintf(stderr, "%s: no team slot was left on another PE of the new team\n", fn);
        return 1;
    }
    // The hgas team with the same members (collective over the parent, fails alike everywhere).
    hgas_team_t core = HGAS_TEAM_INVALID;
    if (hgas_team_split_strided(parent->core, start, stride, size, &core) != HGAS_OK) {
        std::fprintf(stderr, "%s: %s\n", fn, hgas_last_error());
        unmake_team(st, new_team);
        return 1;
    }
    if (*new_team != SHMEM_TEAM_INVALID) (*new_team)->core = core;
    return 0;
}

int shmem_team_split_2d(shmem_team_t parent_team, int xrange, const shmem_team_config_t *xaxis_config,
                        long xaxis_mask, shmem_team_t *xaxis_team, const shmem_team_config_t *yaxis_config,
                        long yaxis_mask, shmem_team_t *yaxis_team) {
    const char *fn = "shmem_team_split_2d";
    if (!xaxis_team || !yaxis_team) fatal(fn, "xaxis_team or yaxis_team is NULL");
    *xaxis_team = *yaxis_team = SHMEM_TEAM_INVALID;
    pe_state &st = state(fn);
    hgasi_shmem_team *parent = team_of(fn, parent_team);
    if (!parent) return parent_team == SHMEM_TEAM_INVALID ? 1 : team_unavailable(fn, parent_team);
    if (xrange < 1) {
        std::fprintf(stderr, "%s: xrange %d must be >= 1\n", fn, xrange);
        return 1;
    }
    if (!config_ok(fn, "the x-axis", xaxis_config, xaxis_mask) || !config_ok(fn, "the y-axis", yaxis_config, yaxis_mask))
        return 1;
    const int n = static_cast<int>(parent->pes.size());
    if (xrange > n) xrange = n;
    const int x = parent->me % xrange, y = parent->me / xrange;
    std::vector<int> row, column;  // x-axis team: same y; y-axis team: same x
    for (int i = y * xrange; i < std::min(n, (y + 1) * xrange); ++i) row.push_back(parent->pes[static_cast<size_t>(i)]);
    for (int i = x; i < n; i += xrange) column.push_back(parent->pes[static_cast<size_t>(i)]);
    int rc = 0;
    // Rows are disjoint, and so are columns: each phase runs all its subsets at once, and a
    // barrier of the parent separates the phases (their subsets overlap).
    const int xslot = take_common_slot(fn, st, subset_of(*parent, row));
    if (xslot < 0) {
        no_slot(fn);
        rc = 1;
    } else {
        *xaxis_team = make_team(st, std::move(row), xslot, xaxis_config, xaxis_mask);
    }
    set_barrier(fn, team_set(*parent));
    const int yslot = take_common_slot(fn, st, subset_of(*parent, column));
    if (yslot < 0) {
        no_slot(fn);
        rc = 1;
    } else {
        *yaxis_team = make_team(st, std::move(column), yslot, yaxis_config, yaxis_mask);
    }
    // Both teams or neither, on every PE of the parent alike.
    if (agree_failed(fn, st, *parent, rc != 0)) {
        unmake_team(st, xaxis_team);
        unmake_team(st, yaxis_team);
        if (rc == 0) std::fprintf(stderr, "%s: no team slot was left on another PE of a new team\n", fn);
        return 1;
    }
    hgas_team_t xcore = HGAS_TEAM_INVALID, ycore = HGAS_TEAM_INVALID;
    if (hgas_team_split_2d(parent->core, xrange, &xcore, &ycore) != HGAS_OK) {
        std::fprintf(stderr, "%s: %s\n", fn, hgas_last_error());
        unmake_team(st, xaxis_team);
        unmake_team(st, yaxis_team);
        return 1;
    }
    (*xaxis_team)->core = xcore;
    (*yaxis_team)->core = ycore;
    return 0;
}

void shmem_team_destroy(shmem_team_t team) {
    const char *fn = "shmem_team_destroy";
    if (team == SHMEM_TEAM_INVALID) return;
    if (team == SHMEM_TEAM_WORLD || team == SHMEM_TEAM_SHARED)
        fatal(fn, "SHMEM_TEAM_WORLD and SHMEM_TEAM_SHARED cannot be destroyed");
    pe_state &st = state(fn);
    hgasi_shmem_team *t = team_of(fn, team);
    if (!t) fatal(fn, "%p is not a team of this PE (destroyed already?)", static_cast<void *>(team));
    while (!t->contexts.empty()) destroy_ctx(fn, t->contexts.back());
    check(fn, hgas_team_destroy(t->core));
    // Collective: once every member is here, nobody uses the team's words any more.
    set_barrier(fn, team_set(*t));
    *st.free_mask() |= 1ull << t->slot;
    st.live.erase(t);
    delete t;
}

}  // extern "C"
