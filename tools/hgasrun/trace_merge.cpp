// HGAS_TRACE: after the job, the ranks' parts (PATH.rankN, one trace event per line, written by
// hgas_finalize; src/base/trace.cpp) become one Chrome/Perfetto trace-event file, PATH. Each
// part is already on the job's time axis (time 0 is the end of the init barrier on every rank),
// so merging is concatenation; the parts are removed once merged.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "options.hpp"

namespace hgasrun {

void merge_trace(int nranks) {
    const char *path = std::getenv("HGAS_TRACE");
    if (!path || !*path) return;
    std::vector<int> missing;
    std::string events;
    for (int r = 0; r < nranks; ++r) {
        const std::string part = std::string(path) + ".rank" + std::to_string(r);
        std::ifstream in(part);
        if (!in) {
            missing.push_back(r);
            continue;
        }
        std::string line;
        while (std::getline(in, line)) {
            while (!line.empty() && (line.back() == ',' || line.back() == '\r')) line.pop_back();
            if (line.empty()) continue;
            if (!events.empty()) events += ",\n";
            events += line;
        }
        in.close();
        std::remove(part.c_str());
    }
    std::string miss;
    for (int r : missing) miss += (miss.empty() ? "" : ",") + std::to_string(r);
    FILE *f = std::fopen(path, "w");
    if (!f) {
        std::perror(("hgasrun: HGAS_TRACE: cannot write " + std::string(path)).c_str());
        return;
    }
    std::fprintf(f, "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"hgas_ranks\":%d,\"hgas_missing_ranks\":[%s]},\n"
                 "\"traceEvents\":[\n%s\n]}\n", nranks, miss.c_str(), events.c_str());
    std::fclose(f);
    if (!missing.empty())
        std::fprintf(stderr, "hgasrun: HGAS_TRACE: %s lacks rank(s) %s (a rank that did not reach hgas_finalize, or "
                     "ran on another host, writes no part here)\n", path, miss.c_str());
}

}  // namespace hgasrun
