#include <map>

#include "boot/boot.hpp"

namespace hgas::boot {

// Nodes are numbered in order of first appearance and local ranks in rank order, so every rank
// computes the same layout from the same allgathered names with no further exchange.
topology topology::from_node_names(const std::vector<std::string> &names, int me) {
    topology t;
    const int n = static_cast<int>(names.size());
    t.node_of.assign(n, 0);
    t.local_of.assign(n, 0);
    std::map<std::string, int> node_index;
    std::vector<int> count;  // ranks seen so far per node
    for (int r = 0; r < n; ++r) {
        auto [it, fresh] = node_index.emplace(names[r], static_cast<int>(count.size()));
        if (fresh) count.push_back(0);
        t.node_of[r] = it->second;
        t.local_of[r] = count[it->second]++;
    }
    t.node_n = static_cast<int>(count.size());
    if (me >= 0 && me < n) {
        t.node_me = t.node_of[me];
        t.local_rank = t.local_of[me];
        t.local_n = count[t.node_me];
    } else {
        t.node_n = n ? t.node_n : 1;
    }
    return t;
}

}  // namespace hgas::boot
