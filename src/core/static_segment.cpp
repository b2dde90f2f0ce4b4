// The static-data segment of a rank (HGAS_SEG_STATIC): the program's globals as symmetric
// memory. What is shared and how is mem/static_data.hpp; this file decides whether the job
// shares it at all, which must come out the same on every rank.
#include "base/log.hpp"
#include "core/rank.hpp"
#include "mem/static_data.hpp"

namespace hgas::core {

status rank::create_static_segment() {
    own_segment &seg = own_[mem::seg_static];
    seg = own_segment{};
    static_off_.clear();
    const mem::static_range &range = mem::program_static_range();
    // Every rank says what it would share; offsets only mean the same variable on every rank
    // if all run the same executable, so one mismatch turns static data off for the job.
    std::string mine;
    if (!cfg_.flag(setting::static_data)) mine = "-HGAS_STATIC_DATA=0";
    // Ranks that are threads of one process share its globals: one variable cannot be a
    // different symmetric object of each of them (docs/threads.md).
    else if (ranks_per_process_ > 1)
        mine = "-HGAS_THREADS=" + std::to_string(ranks_per_process_) + ": ranks that are threads of one process share "
               "its global variables, so they are not symmetric; use hgas_malloc";
    else if (std::string why = mem::static_range_problem(range); !why.empty()) mine = "-" + why;
    else mine = range.fingerprint;
    std::vector<std::string> all;
    HGAS_TRY(store_->allgather("init.static", mine, all, cfg_.seconds(setting::boot_timeout)));
    for (int p = 0; p < job_.size && static_off_.empty(); ++p) {
        const std::string &theirs = all[p];
        if (!theirs.empty() && theirs[0] == '-')
            static_off_ = p == job_.rank ? theirs.substr(1) : "rank " + std::to_string(p) + ": " + theirs.substr(1);
        else if (theirs != all[0])
            static_off_ = "rank " + std::to_string(p) + " runs a different executable than rank 0 (" + theirs +
                          " vs " + all[0] + "); every rank must run the same one";
    }
    if (!static_off_.empty()) {
        HGASI_DEBUG("mem", "static data is not symmetric: %s", static_off_.c_str());
        return status::ok;
    }
    // Every rank found its pages shareable, so what fails now is a resource (a full /dev/shm),
    // which ends init like a heap that does not fit.
    auto m = mem::share_static_range(range, mem::shm_name(job_.job_id, job_.rank, mem::seg_static));
    if (!m.ok())
        return fail(m.error(), "%s (the program's global variables; HGAS_STATIC_DATA=0 keeps them private)",
                    last_error().c_str());
    seg.mapping = std::move(m.value());
    seg.base = range.base;
    seg.size = range.size;
    HGASI_DEBUG("mem", "static data: %llu bytes at %p are symmetric (%s)", (unsigned long long)range.size,
                static_cast<void *>(range.base), range.fingerprint.c_str());
    return status::ok;
}

}  // namespace hgas::core
