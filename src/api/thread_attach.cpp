// hgas_rank_self and hgas_thread_attach (thread_attach.hpp).
#include "api/thread_attach.hpp"

#include <hgas/hgas.h>

#include <map>
#include <mutex>

using namespace hgas;

namespace {
// The process's live ranks and the threads attached to each. A registry, not rank state: an
// attach must tell a live rank from a stale handle before it touches the rank.
std::mutex g_mu;
std::map<core::rank *, int> g_attached;

thread_local core::rank *tls_own = nullptr;  // the rank this thread created with hgas_init

// The rank this thread is attached to; a thread that ends attached detaches.
struct attachment {
    core::rank *r = nullptr;
    void set(core::rank *to) {  // with g_mu held
        if (r) {
            auto it = g_attached.find(r);
            if (it != g_attached.end()) --it->second;
        }
        r = to;
        if (r) ++g_attached[r];
        core::set_thread_rank(r);
    }
    ~attachment() {
        if (!r) return;
        std::lock_guard<std::mutex> g(g_mu);
        set(nullptr);
    }
};
thread_local attachment tls_attached;
}  // namespace

namespace hgas::api {

void rank_started(core::rank *r) {
    std::lock_guard<std::mutex> g(g_mu);
    g_attached[r] = 0;
    tls_own = r;
}

status rank_ending(core::rank *r) {
    std::lock_guard<std::mutex> g(g_mu);
    if (tls_attached.r == r)
        return fail(status::unsupported, "hgas_finalize: this thread acts for rank %d through hgas_thread_attach; "
                    "call hgas_finalize on the thread that called hgas_init for it", r->me());
    auto it = g_attached.find(r);
    if (it != g_attached.end() && it->second > 0)
        return fail(status::unsupported, "hgas_finalize: %d thread(s) are still attached to rank %d "
                    "(hgas_thread_attach): they must call hgas_thread_attach(NULL) or end first", it->second,
                    r->me());
    g_attached.erase(r);
    if (tls_own == r) tls_own = nullptr;
    return status::ok;
}
}  // namespace hgas::api

hgas_rank_handle_t hgas_rank_self(void) { return reinterpret_cast<hgas_rank_handle_t>(core::current()); }

hgas_status_t hgas_thread_attach(hgas_rank_handle_t rank) {
    auto *r = reinterpret_cast<core::rank *>(rank);
    std::lock_guard<std::mutex> g(g_mu);
    // With one rank per process another thread may have finalized this thread's rank: then the
    // rank is gone from the registry and this thread owns none.
    if (tls_own && g_attached.count(tls_own))
        return to_c(fail(status::already_initialized, "hgas_thread_attach: this thread called hgas_init for rank %d "
                         "and acts for it until hgas_finalize; attach threads that did not call hgas_init",
                         tls_own->me()));
    if (r && g_attached.find(r) == g_attached.end())
        return to_c(fail(status::invalid_arg, "hgas_thread_attach: %p is not a live rank of this process: pass what "
                         "hgas_rank_self() returned on the rank's thread, before that rank's hgas_finalize",
                         static_cast<void *>(r)));
    tls_attached.set(r);
    return HGAS_OK;
}
