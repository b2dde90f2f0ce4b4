// OpenSHMEM contexts: each one a completion domain of its own (OpenSHMEM 1.5, "Communication
// management"), which names its team (a context made on a team numbers PEs in that team:
// ctx_pe() turns them into world PEs).
//
// Completion. hgas completes operations either rank-wide (hgas_quiet: every operation the rank
// issued, whichever thread) or one by one (a handle of hgas_put_nb / hgas_get_nb). A context's
// _nbi puts and gets are therefore issued as handle operations and kept in the context's
// pending list, and shmem_ctx_quiet waits for that list: it neither waits for nor is delayed by
// another context's operations (a thread's private context is independent of the others').
// Operations that only the rank's quiet completes remotely (a blocking put, which returns at
// local completion; put_signal; strided puts) mark the context, and its next quiet adds
// hgas_quiet. Blocking gets and atomics are complete when they return. The default context is
// the rank's domain: shmem_quiet is hgas_quiet, which completes the default context's
// operations, as the specification requires, and need not complete other contexts' handles.
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <mutex>
#include <vector>

#include "internal.hpp"

// The object behind a shmem_ctx_t other than SHMEM_CTX_DEFAULT.
struct hgasi_shmem_ctx {
    uint64_t magic;
    shmem_team_t handle;    // the team as the program named it (shmem_ctx_get_team)
    hgasi_shmem_team *team; // that team (which lists this context until it is destroyed)
    long options;
    // The completion domain. `mu` guards `pending` (a shareable context may be used by several
    // threads; a private one takes it uncontended) and is held through a quiet, so that a
    // quiet on another thread cannot return before the operations it found are complete.
    std::mutex mu;
    std::vector<hgas_handle_t> pending;  // _nbi operations in flight (handles, never DONE)
    size_t compact_at = k_first_compaction;  // pending size at which completed ones are dropped
    std::atomic<bool> rank_quiet{false};     // an operation only hgas_quiet completes was issued
    static constexpr size_t k_first_compaction = 1024;
};

namespace hgas::shmem {
namespace {
constexpr uint64_t k_ctx_magic = 0x68676173'63747821ull;  // "hgasctx!"
constexpr long k_ctx_options = SHMEM_CTX_SERIALIZED | SHMEM_CTX_PRIVATE | SHMEM_CTX_NOSTORE;
// Guards the teams' context lists: under SHMEM_THREAD_MULTIPLE threads create and destroy
// their contexts at once (the usual pattern: one private context per thread). A lock, not state.
std::mutex g_contexts_mu;

int create(const char *fn, shmem_team_t team, long options, shmem_ctx_t *ctx) {
    if (!ctx) fatal(fn, "the result pointer is NULL");
    *ctx = SHMEM_CTX_INVALID;
    if (!hgas_initialized()) fatal(fn, "called before shmem_init()");
    if (options & ~k_ctx_options) {
        std::fprintf(stderr, "%s: options 0x%lx hold bits other than SHMEM_CTX_SERIALIZED, _PRIVATE, _NOSTORE\n", fn,
                     options);
        return 1;
    }
    hgasi_shmem_team *t = team_of(fn, team);
    if (!t) return team_unavailable(fn, team);
    auto *c = new hgasi_shmem_ctx;
    c->magic = k_ctx_magic;
    c->handle = team;
    c->team = t;
    c->options = options;
    *ctx = c;
    std::lock_guard<std::mutex> g(g_contexts_mu);
    t->contexts.push_back(*ctx);
    return 0;
}
}  // namespace

void check_ctx(const char *fn, shmem_ctx_t ctx) {
    if (ctx == SHMEM_CTX_DEFAULT) return;
    if (ctx == SHMEM_CTX_INVALID) fatal(fn, "the context is SHMEM_CTX_INVALID");
    if (ctx->magic != k_ctx_magic)
        fatal(fn, "%p is not a live context (destroyed, or not from shmem_ctx_create)", static_cast<void *>(ctx));
}

int ctx_pe(const char *fn, shmem_ctx_t ctx, int pe) {
    check_ctx(fn, ctx);
    if (ctx == SHMEM_CTX_DEFAULT || ctx->team->world) return pe;  // world numbers: checked where used
    const int n = static_cast<int>(ctx->team->pes.size());
    if (pe < 0 || pe >= n)
        fatal(fn, "PE %d is not in the context's team (it has PEs 0..%d, numbered in the team)", pe, n - 1);
    return ctx->team->pes[static_cast<size_t>(pe)];
}

void ctx_track(const char *fn, shmem_ctx_t ctx, hgas_handle_t h) {
    if (h == HGAS_HANDLE_DONE) return;
    std::lock_guard<std::mutex> g(ctx->mu);
    auto &p = ctx->pending;
    p.push_back(h);
    if (p.size() < ctx->compact_at) return;
    // Drop the handles that completed meanwhile, so that a context issuing many operations
    // between quiets does not grow the list (and the rank's handle table) without bound.
    size_t kept = 0;
    for (hgas_handle_t x : p) {
        int done = 0;
        check(fn, hgas_test(x, &done));
        if (!done) p[kept++] = x;
    }
    p.resize(kept);
    ctx->compact_at = std::max(hgasi_shmem_ctx::k_first_compaction, 2 * kept);
}

void ctx_needs_rank_quiet(shmem_ctx_t ctx) {
    if (ctx != SHMEM_CTX_DEFAULT && !ctx->rank_quiet.load(std::memory_order_relaxed))
        ctx->rank_quiet.store(true, std::memory_order_relaxed);
}

namespace {
// Completes the context's pending operations; then, for a quiet, the rank's (if the context
// issued operations only it completes), for a fence the rank's ordering.
void complete(const char *fn, shmem_ctx_t ctx, bool quiet) {
    std::lock_guard<std::mutex> g(ctx->mu);
    // Operations that went straight to a mapped peer (handle DONE) were stores of this thread,
    // possibly non-temporal ones in memcpy: a full fence makes them visible before the return,
    // as the rank's quiet does with its store fence.
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (!ctx->pending.empty()) {
        check(fn, hgas_wait_all(ctx->pending.data(), ctx->pending.size()));
        ctx->pending.clear();
        ctx->compact_at = hgasi_shmem_ctx::k_first_compaction;
    }
    if (!ctx->rank_quiet.load(std::memory_order_relaxed)) return;
    if (quiet) {
        ctx->rank_quiet.store(false, std::memory_order_relaxed);
        check(fn, hgas_quiet());
    } else {
        check(fn, hgas_fence());
    }
}
}  // namespace

void destroy_ctx(const char *fn, shmem_ctx_t ctx) {
    complete(fn, ctx, true);  // destroying a context completes its operations
    {
        std::lock_guard<std::mutex> g(g_contexts_mu);
        auto &list = ctx->team->contexts;
        list.erase(std::remove(list.begin(), list.end(), ctx), list.end());
    }
    ctx->magic = 0;  // a later use is reported as "not a live context" while the memory lasts
    delete ctx;
}

}  // namespace hgas::shmem

using namespace hgas::shmem;

extern "C" {

int shmem_ctx_create(long options, shmem_ctx_t *ctx) {
    return create("shmem_ctx_create", SHMEM_TEAM_WORLD, options, ctx);
}
int shmem_team_create_ctx(shmem_team_t team, long options, shmem_ctx_t *ctx) {
    return create("shmem_team_create_ctx", team, options, ctx);
}
int shmem_ctx_get_team(shmem_ctx_t ctx, shmem_team_t *team) {
    const char *fn = "shmem_ctx_get_team";
    if (!team) fatal(fn, "the result pointer is NULL");
    if (ctx == SHMEM_CTX_INVALID) {
        *team = SHMEM_TEAM_INVALID;
        return 1;
    }
    check_ctx(fn, ctx);
    *team = ctx == SHMEM_CTX_DEFAULT ? SHMEM_TEAM_WORLD : ctx->handle;
    return 0;
}
void shmem_ctx_destroy(shmem_ctx_t ctx) {
    const char *fn = "shmem_ctx_destroy";
    if (ctx == SHMEM_CTX_INVALID) return;
    if (ctx == SHMEM_CTX_DEFAULT) fatal(fn, "SHMEM_CTX_DEFAULT cannot be destroyed");
    check_ctx(fn, ctx);
    destroy_ctx(fn, ctx);
}
// OpenSHMEM 1.5: fence and quiet on SHMEM_CTX_INVALID perform no operation (a PE outside a
// team quiets the context it could not make on it, as the specification's team-context example
// does). RMA, signals and atomics on it stay fatal (undefined in the specification).
void shmem_ctx_fence(shmem_ctx_t ctx) {
    if (ctx == SHMEM_CTX_INVALID) return;
    check_ctx("shmem_ctx_fence", ctx);
    if (ctx == SHMEM_CTX_DEFAULT) return check("shmem_ctx_fence", hgas_fence());
    // Completion orders too: the context's pending operations are delivered before any later one.
    complete("shmem_ctx_fence", ctx, false);
}
void shmem_ctx_quiet(shmem_ctx_t ctx) {
    if (ctx == SHMEM_CTX_INVALID) return;
    check_ctx("shmem_ctx_quiet", ctx);
    if (ctx == SHMEM_CTX_DEFAULT) return check("shmem_ctx_quiet", hgas_quiet());
    complete("shmem_ctx_quiet", ctx, true);
}

}  // extern "C"
