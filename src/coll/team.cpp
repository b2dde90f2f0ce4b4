// Teams: the per-rank table, the predefined teams, splits (slot agreement by an allreduce over
// the parent), destroy, and the team barrier. See team.hpp and README.md ("Teams").
#include "coll/team.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>

#include "coll/coll.hpp"
#include "coll/devmem.hpp"
#include "rma/rma.hpp"
#include "sync/sync.hpp"

namespace hgas::coll {

namespace {

constexpr int k_slots = core::internal_objects::coll_team_slots;
constexpr int k_mask_words = (k_slots + 63) / 64;  // the free-slot masks: k_mask_words 64-bit words
static_assert(k_mask_words == 2, "agree_split sends two mask words");
using slot_mask = std::array<uint64_t, k_mask_words>;
// The bits of word w that name a slot (the last word is partly beyond k_slots).
constexpr uint64_t slot_bits(int w) {
    return 64 * (w + 1) <= k_slots ? ~uint64_t{0} : (uint64_t{1} << (k_slots - 64 * w)) - 1;
}

// Everything a rank knows of its teams; attached to the rank (released with it).
struct table {
    std::map<hgas_team_t, std::unique_ptr<team>> live;
    hgas_team_t next_id = HGAS_TEAM_GPU + 1;  // ids are never reused: a stale id is detected
    slot_mask used{};                         // slots held by a live team of this rank
};
const char k_table_key = 0;

team &add(table &tb, core::rank &r, hgas_team_t id, std::vector<int> ranks, int slot) {
    auto t = std::make_unique<team>();
    t->id = id;
    t->r = &r;
    t->slot = slot;
    t->me = static_cast<int>(std::find(ranks.begin(), ranks.end(), r.me()) - ranks.begin());
    t->ranks = std::move(ranks);
    tb.used[static_cast<size_t>(slot / 64)] |= uint64_t{1} << (slot % 64);
    team &ref = *t;
    tb.live[id] = std::move(t);
    return ref;
}

table &tables(core::rank &r) {
    auto &att = r.attachments();
    auto it = att.find(&k_table_key);
    if (it != att.end()) return *static_cast<table *>(it->second.value);
    // First use: the predefined teams. Each is known locally (the topology and every rank's
    // GPU are exchanged at init), and each predefined kind has its own slot: the node teams
    // of different nodes share slot_node, but no rank is in two of them.
    auto *tb = new table;
    att[&k_table_key] = {tb, [](void *p) { delete static_cast<table *>(p); }};
    std::vector<int> all(static_cast<size_t>(r.n())), node, gpu;
    for (int p = 0; p < r.n(); ++p) {
        all[static_cast<size_t>(p)] = p;
        if (r.topo().node_of[static_cast<size_t>(p)] != r.topo().node_me) continue;
        node.push_back(p);
        if (p == r.me() || (r.gpu_of(r.me()) >= 0 && r.gpu_of(p) == r.gpu_of(r.me()))) gpu.push_back(p);
    }
    team &w = add(*tb, r, HGAS_TEAM_WORLD, std::move(all), slot_world);
    w.world = true;
    w.epoch = &r.internal().coll_epoch;
    add(*tb, r, HGAS_TEAM_NODE, std::move(node), slot_node);
    add(*tb, r, HGAS_TEAM_GPU, std::move(gpu), slot_gpu);
    return *tb;
}

// Lowest set bit at or above first_split_slot, or -1.
int lowest_slot(slot_mask mask) {
    mask[0] &= ~((uint64_t{1} << first_split_slot) - 1);
    for (int w = 0; w < k_mask_words; ++w)
        if (mask[static_cast<size_t>(w)]) return 64 * w + __builtin_ctzll(mask[static_cast<size_t>(w)]);
    return -1;
}

// The collective part of a split: one allreduce (AND) over the parent of [the slots free here
// (all ones on a rank that joins no new team), whether this rank's arguments are valid, the
// arguments, their complements]. AND of x equals ~(AND of ~x) only where every rank passed
// the same x, so a mismatch is seen by every rank alike, and so is a bad argument anywhere.
status agree_split(team &parent, const char *op, bool joins, bool valid, const uint64_t *args, int k,
                   slot_mask &common) {
    constexpr int a0 = k_mask_words + 1;  // the arguments follow the masks and the valid flag
    uint64_t v[a0 + 2 * 3], out[a0 + 2 * 3];
    for (int w = 0; w < k_mask_words; ++w)
        v[w] = joins ? ~tables(*parent.r).used[static_cast<size_t>(w)] & slot_bits(w) : ~uint64_t{0};
    v[k_mask_words] = valid ? 1 : 0;
    for (int i = 0; i < k; ++i) {
        v[a0 + 2 * i] = args[i];
        v[a0 + 1 + 2 * i] = ~args[i];
    }
    const std::string why = valid ? std::string() : last_error();
    HGAS_TRY(allreduce(parent, out, v, static_cast<size_t>(a0 + 2 * k), HGAS_UINT64, HGAS_OP_AND));
    if (!valid) return fail(status::invalid_arg, "%s", why.c_str());
    for (int i = 0; i < k; ++i)
        if (out[a0 + 2 * i] != ~out[a0 + 1 + 2 * i])
            return fail(status::invalid_arg, "%s: the ranks of %s passed different arguments (this rank %llu, "
                        "argument %d); every rank of the parent must pass the same", op, parent.describe().c_str(),
                        (unsigned long long)args[i], i + 1);
    if (!out[k_mask_words])
        return fail(status::invalid_arg, "%s: another rank of %s passed a bad argument (its hgas_last_error() says "
                    "which)", op, parent.describe().c_str());
    for (int w = 0; w < k_mask_words; ++w) common[static_cast<size_t>(w)] = out[w];
    return status::ok;
}

status no_slot(const char *op, const team &parent) {
    return fail(status::no_memory, "%s: no team slot is free on every member of the new team (a rank may belong "
                "to %d teams at once, the predefined ones included; destroy teams that are no longer used) "
                "(parent: %s)", op, k_slots, parent.describe().c_str());
}

}  // namespace

std::string team::describe() const {
    if (world) return "the world team";
    char b[64];
    std::snprintf(b, sizeof b, "team %d (%d ranks)", id, n());
    return b;
}

team &world(core::rank &r) { return *tables(r).live.at(HGAS_TEAM_WORLD); }

team *lookup(core::rank &r, hgas_team_t id) {
    table &tb = tables(r);
    auto it = tb.live.find(id);
    return it == tb.live.end() ? nullptr : it->second.get();
}

result<team *> find(core::rank &r, const char *op, hgas_team_t id) {
    if (team *t = lookup(r, id)) return t;
    if (id == HGAS_TEAM_INVALID)
        return fail(status::invalid_arg, "%s: the team is HGAS_TEAM_INVALID (a split gives it to the ranks that "
                    "are not in the new team)", op);
    if (id > HGAS_TEAM_GPU && id < tables(r).next_id)
        return fail(status::invalid_arg, "%s: team %d was destroyed (hgas_team_destroy) on rank %d", op, id, r.me());
    return fail(status::invalid_arg, "%s: %d is not a team of rank %d (no split gave it this handle)", op, id,
                r.me());
}

status split_strided(core::rank &r, hgas_team_t parent_id, int start, int stride, int size, hgas_team_t *out) {
    const char *op = "hgas_team_split_strided";
    if (!out) return fail(status::invalid_arg, "%s: new_team is NULL", op);
    *out = HGAS_TEAM_INVALID;
    HGAS_TRY_ASSIGN(team *parent, find(r, op, parent_id));
    const int pn = parent->n();
    const long long last = start + static_cast<long long>(size - 1) * stride;
    bool valid = true;
    if (size < 1 || stride < 1 || start < 0 || start >= pn || last >= pn) {
        (void)fail(status::invalid_arg, "%s: (start %d, stride %d, size %d) is not a subset of %s: size and stride "
                   "must be >= 1 and start .. start + (size - 1) * stride inside 0 .. %d", op, start, stride, size,
                   parent->describe().c_str(), pn - 1);
        valid = false;
    }
    const int rel = parent->me - start;
    const bool member = valid && rel >= 0 && rel % stride == 0 && rel / stride < size;
    const uint64_t args[3] = {static_cast<uint64_t>(start), static_cast<uint64_t>(stride),
                              static_cast<uint64_t>(size)};
    slot_mask common{};
    HGAS_TRY(agree_split(*parent, op, member, valid, args, 3, common));
    const int slot = lowest_slot(common);
    if (slot < 0) return no_slot(op, *parent);
    if (!member) return status::ok;
    std::vector<int> ranks;
    for (int i = 0; i < size; ++i) ranks.push_back(parent->rank_of(start + i * stride));
    table &tb = tables(r);
    *out = add(tb, r, tb.next_id++, std::move(ranks), slot).id;
    return status::ok;
}

status split_2d(core::rank &r, hgas_team_t parent_id, int xrange, hgas_team_t *xteam, hgas_team_t *yteam) {
    const char *op = "hgas_team_split_2d";
    if (!xteam || !yteam) return fail(status::invalid_arg, "%s: xaxis_team or yaxis_team is NULL", op);
    *xteam = *yteam = HGAS_TEAM_INVALID;
    HGAS_TRY_ASSIGN(team *parent, find(r, op, parent_id));
    bool valid = true;
    if (xrange < 1) {
        (void)fail(status::invalid_arg, "%s: xrange %d must be >= 1", op, xrange);
        valid = false;
    }
    const uint64_t args[1] = {static_cast<uint64_t>(xrange)};
    slot_mask common{};
    HGAS_TRY(agree_split(*parent, op, true, valid, args, 1, common));
    // Rows are disjoint, and so are columns; a row and a column share one rank, so they take
    // two different slots: the two lowest free on every rank of the parent.
    const int xs = lowest_slot(common);
    if (xs >= 0) common[static_cast<size_t>(xs / 64)] &= ~(uint64_t{1} << (xs % 64));
    const int ys = xs < 0 ? -1 : lowest_slot(common);
    if (ys < 0) return no_slot(op, *parent);
    const int n = parent->n(), xr = std::min(xrange, n);
    const int x = parent->me % xr, y = parent->me / xr;
    std::vector<int> row, column;
    for (int i = y * xr; i < std::min(n, (y + 1) * xr); ++i) row.push_back(parent->rank_of(i));
    for (int i = x; i < n; i += xr) column.push_back(parent->rank_of(i));
    table &tb = tables(r);
    *xteam = add(tb, r, tb.next_id++, std::move(row), xs).id;
    *yteam = add(tb, r, tb.next_id++, std::move(column), ys).id;
    return status::ok;
}

status destroy(core::rank &r, hgas_team_t id) {
    const char *op = "hgas_team_destroy";
    if (id >= HGAS_TEAM_WORLD && id <= HGAS_TEAM_GPU)
        return fail(status::invalid_arg, "%s: the predefined teams (HGAS_TEAM_WORLD, HGAS_TEAM_NODE, HGAS_TEAM_GPU) "
                    "cannot be destroyed", op);
    HGAS_TRY_ASSIGN(team *t, find(r, op, id));
    // Once every member is past the barrier, nothing more arrives in this rank's words of the
    // slot (every signal of a collective or barrier is waited for by its receiver), so they can
    // be cleared for the next team that takes the slot: its epochs start at 0 again.
    // The team's last stream-ordered kernel on this GPU may still be queued on a stream: done first.
    if (gpu::device *d = r.device(mem::kind::cuda)) HGAS_TRY(d->team_quiesce(t->slot, r.timeout()));
    HGAS_TRY(team_barrier(*t));
    const uint64_t first = t->word_off(0);
    std::memset(r.own_base(mem::seg_symmetric) + first, 0, uint64_t{core::internal_objects::coll_team_words} * 64);
    // And the slot's flags of the one-kernel allreduce in the cuda heap (direct.cpp): every
    // member's kernel has finished, so none is still on its way.
    if (r.internal().coll_kernel_flags && r.own_size(mem::seg_cuda_symmetric)) {
        constexpr uint64_t words = core::internal_objects::coll_kernel_team_words;
        static const uint64_t zeros[words] = {};
        HGAS_TRY(detail::local_copy(r, op, r.own_base(mem::seg_cuda_symmetric) + r.internal().coll_kernel_flags +
                                               static_cast<uint64_t>(t->slot) * words * 8,
                                    zeros, sizeof zeros));
    }
    table &tb = tables(r);
    tb.used[static_cast<size_t>(t->slot / 64)] &= ~(uint64_t{1} << (t->slot % 64));
    tb.live.erase(id);
    return status::ok;
}

status team_barrier(team &t) {
    core::rank &r = *t.r;
    if (t.world) return sync::barrier(r);
    HGAS_TRY(rma::quiet(r));
    const int n = t.n();
    if (n == 1) return status::ok;
    // Dissemination, as sync::barrier, over the team's words: round k adds one to member
    // (me + 2^k) mod n's word w_barrier + k. Each barrier adds exactly one per round, so after
    // `epoch` barriers the word holds at least `epoch` (a faster peer may be one ahead).
    const uint64_t epoch = ++t.barrier_epoch;
    const std::string what = "hgas_team_barrier on " + t.describe();
    for (int k = 0, dist = 1; dist < n; ++k, dist <<= 1) {
        const hgas_gptr_t peer = mem::make_gptr(t.rank_of((t.me + dist) % n), mem::seg_symmetric,
                                                t.word_off(detail::w_barrier + k));
        HGAS_TRY(rma::signal_update(r, peer, HGAS_SIGNAL_ADD, 1, rma::issuer::runtime));
        const auto *mine = reinterpret_cast<const uint64_t *>(r.own_base(mem::seg_symmetric) +
                                                              t.word_off(detail::w_barrier + k));
        core::safe_point sp(r);
        HGAS_TRY(r.wait(what.c_str(), [&] { return __atomic_load_n(mine, __ATOMIC_ACQUIRE) >= epoch; }));
    }
    return status::ok;
}

}  // namespace hgas::coll
