// Running an application as the ranks of this process: one rank per process (hgasrun -n N), or
// T ranks as threads of one process (hgasrun --threads T, which sets HGAS_THREADS=T;
// docs/threads.md: every thread that calls hgas_init is a rank of its own). Each rank runs
// hgas_init, the program and hgas_finalize, so the program itself is written for one rank.
#pragma once

#include <hgas/hgas.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

namespace apps {

/// Ranks that are threads of this process: HGAS_THREADS (hgasrun --threads T), 1 when unset.
inline int ranks_per_process() {
    const char *t = std::getenv("HGAS_THREADS");
    return t && std::atoi(t) > 1 ? std::atoi(t) : 1;
}

/// One rank on the calling thread: hgas_init, `program()` (returns an exit status), stdout
/// flushed, hgas_finalize. A failed init or finalize prints "<name>: hgas_init: <why>" and
/// gives 1 (a finalize failure only where the program itself succeeded).
template <class F>
int run_rank(const char *name, F &program) {
    if (hgas_init() != HGAS_OK) {
        std::fprintf(stderr, "%s: hgas_init: %s\n", name, hgas_last_error());
        return 1;
    }
    const int rc = program();
    std::fflush(stdout);
    if (hgas_finalize() != HGAS_OK && rc == 0) {
        std::fprintf(stderr, "%s: hgas_finalize: %s\n", name, hgas_last_error());
        return 1;
    }
    return rc;
}

/// run_rank for each rank of this process: on the calling thread with one rank per process,
/// else on ranks_per_process() threads at once, returning the highest status. `program` is
/// called on every rank thread concurrently: what it shares (options parsed before the job
/// forms) it must only read; a rank keeps the rest on its own stack or in hgas memory.
template <class F>
int run_ranks(const char *name, F &&program) {
    const int t = ranks_per_process();
    if (t <= 1) return run_rank(name, program);
    std::vector<int> rc(static_cast<size_t>(t), 0);
    std::vector<std::thread> ranks;
    for (int i = 0; i < t; ++i)
        ranks.emplace_back([&rc, &program, name, i] { rc[static_cast<size_t>(i)] = run_rank(name, program); });
    for (std::thread &r : ranks) r.join();
    return *std::max_element(rc.begin(), rc.end());
}

}  // namespace apps
