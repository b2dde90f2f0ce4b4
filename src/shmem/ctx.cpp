// OpenSHMEM contexts. hgas has one ordering and completion domain per rank, so a context is a
// validated handle that names its team: every context's fence/quiet is the PE's fence/quiet,
// which does at least what OpenSHMEM asks of a context's (docs/shmem.md). A context made on a
// team numbers PEs in that team: ctx_pe() turns them into world PEs.
#include <algorithm>
#include <cstdio>
#include <mutex>

#include "internal.hpp"

// The object behind a shmem_ctx_t other than SHMEM_CTX_DEFAULT.
struct hgasi_shmem_ctx {
    uint64_t magic;
    shmem_team_t handle;    // the team as the program named it (shmem_ctx_get_team)
    hgasi_shmem_team *team; // that team (which lists this context until it is destroyed)
    long options;
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
    *ctx = new hgasi_shmem_ctx{k_ctx_magic, team, t, options};
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

void destroy_ctx(const char *fn, shmem_ctx_t ctx) {
    check(fn, hgas_quiet());  // destroying a context completes its operations
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
    check("shmem_ctx_fence", hgas_fence());
}
void shmem_ctx_quiet(shmem_ctx_t ctx) {
    if (ctx == SHMEM_CTX_INVALID) return;
    check_ctx("shmem_ctx_quiet", ctx);
    check("shmem_ctx_quiet", hgas_quiet());
}

}  // extern "C"
