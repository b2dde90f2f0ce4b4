// The C API of teams (hgas.h, "Teams"): handle lookup and argument plumbing to src/coll.
#include <hgas/hgas.h>

#include <algorithm>

#include "api/rank_guard.hpp"
#include "coll/coll.hpp"
#include "coll/team.hpp"
#include "core/rank.hpp"

using namespace hgas;

// Looks up the team or returns its failure from the C function.
#define HGASI_TEAM(t, r, id)                                      \
    auto t##_res_ = coll::find(*r, __func__, id);                 \
    if (!t##_res_.ok()) return to_c(t##_res_.error());            \
    coll::team &t = *t##_res_.value()

extern "C" {

int hgas_team_my_rank(hgas_team_t team) {
    core::rank *r = core::current();
    if (!r) return -1;
    core::api_guard g(*r);
    const coll::team *t = coll::lookup(*r, team);
    return t ? t->me : -1;
}

int hgas_team_n(hgas_team_t team) {
    core::rank *r = core::current();
    if (!r) return -1;
    core::api_guard g(*r);
    const coll::team *t = coll::lookup(*r, team);
    return t ? t->n() : -1;
}

int hgas_team_translate(hgas_team_t src_team, int src_rank, hgas_team_t dst_team) {
    core::rank *r = core::current();
    if (!r) return -1;
    core::api_guard g(*r);
    const coll::team *s = coll::lookup(*r, src_team), *d = coll::lookup(*r, dst_team);
    if (!s || !d || src_rank < 0 || src_rank >= s->n()) return -1;
    const int job_rank = s->rank_of(src_rank);
    auto it = std::find(d->ranks.begin(), d->ranks.end(), job_rank);
    return it == d->ranks.end() ? -1 : static_cast<int>(it - d->ranks.begin());
}

hgas_status_t hgas_team_split_strided(hgas_team_t parent, int start, int stride, int size, hgas_team_t *new_team) {
    HGASI_RANK(r);
    return to_c(coll::split_strided(*r, parent, start, stride, size, new_team));
}

hgas_status_t hgas_team_split_2d(hgas_team_t parent, int xrange, hgas_team_t *xaxis_team, hgas_team_t *yaxis_team) {
    HGASI_RANK(r);
    return to_c(coll::split_2d(*r, parent, xrange, xaxis_team, yaxis_team));
}

hgas_status_t hgas_team_destroy(hgas_team_t team) {
    HGASI_RANK(r);
    return to_c(coll::destroy(*r, team));
}

hgas_status_t hgas_team_barrier(hgas_team_t team) {
    HGASI_RANK(r);
    HGASI_TEAM(t, r, team);
    return to_c(coll::team_barrier(t));
}

hgas_status_t hgas_team_broadcast(hgas_team_t team, void *dst, const void *src, size_t bytes, int root) {
    HGASI_RANK(r);
    HGASI_TEAM(t, r, team);
    return to_c(coll::broadcast(t, dst, src, bytes, root));
}

hgas_status_t hgas_team_reduce(hgas_team_t team, void *dst, const void *src, size_t count, hgas_dtype_t type,
                               hgas_op_t op, int root) {
    HGASI_RANK(r);
    HGASI_TEAM(t, r, team);
    return to_c(coll::reduce(t, dst, src, count, type, op, root));
}

hgas_status_t hgas_team_allreduce(hgas_team_t team, void *dst, const void *src, size_t count, hgas_dtype_t type,
                                  hgas_op_t op) {
    HGASI_RANK(r);
    HGASI_TEAM(t, r, team);
    return to_c(coll::allreduce(t, dst, src, count, type, op));
}

hgas_status_t hgas_team_fcollect(hgas_team_t team, void *dst, const void *src, size_t bytes) {
    HGASI_RANK(r);
    HGASI_TEAM(t, r, team);
    return to_c(coll::fcollect(t, dst, src, bytes));
}

hgas_status_t hgas_team_alltoall(hgas_team_t team, void *dst, const void *src, size_t bytes) {
    HGASI_RANK(r);
    HGASI_TEAM(t, r, team);
    return to_c(coll::alltoall(t, dst, src, bytes));
}

hgas_status_t hgas_team_reduce_scatter(hgas_team_t team, void *dst, const void *src, size_t count,
                                       hgas_dtype_t type, hgas_op_t op) {
    HGASI_RANK(r);
    HGASI_TEAM(t, r, team);
    return to_c(coll::reduce_scatter(t, dst, src, count, type, op));
}

hgas_status_t hgas_team_collect(hgas_team_t team, void *dst, const void *src, size_t bytes, size_t *total) {
    HGASI_RANK(r);
    HGASI_TEAM(t, r, team);
    return to_c(coll::collect(t, dst, src, bytes, total));
}

hgas_status_t hgas_team_alltoallv(hgas_team_t team, void *dst, const size_t *recv_off, const size_t *recv_bytes,
                                  const void *src, const size_t *send_off, const size_t *send_bytes) {
    HGASI_RANK(r);
    HGASI_TEAM(t, r, team);
    return to_c(coll::alltoallv(t, dst, recv_off, recv_bytes, src, send_off, send_bytes));
}

}  // extern "C"
