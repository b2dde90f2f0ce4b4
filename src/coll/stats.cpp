// The collectives' counters (stats.hpp, testing_coll.h).
#include "coll/stats.hpp"

namespace hgas::coll::detail {

namespace {
const char k_stats_key = 0;
}

hgasi_coll_stats_t &stats(core::rank &r) {
    auto &att = r.attachments();
    auto it = att.find(&k_stats_key);
    if (it != att.end()) return *static_cast<hgasi_coll_stats_t *>(it->second.value);
    auto *s = new hgasi_coll_stats_t{};
    att[&k_stats_key] = {s, [](void *p) { delete static_cast<hgasi_coll_stats_t *>(p); }};
    return *s;
}

}  // namespace hgas::coll::detail

extern "C" hgas_status_t hgasi_coll_stats(hgasi_coll_stats_t *out) {
    hgas::core::rank *r = hgas::core::current();
    if (!r) return HGAS_ERR_NOT_INITIALIZED;
    if (!out) return HGAS_ERR_INVALID_ARG;
    hgas::core::api_guard g(*r);
    *out = hgas::coll::detail::stats(*r);
    return HGAS_OK;
}

extern "C" hgas_status_t hgasi_coll_stats_reset(void) {
    hgas::core::rank *r = hgas::core::current();
    if (!r) return HGAS_ERR_NOT_INITIALIZED;
    hgas::core::api_guard g(*r);
    hgas::coll::detail::stats(*r) = hgasi_coll_stats_t{};
    return HGAS_OK;
}
