#include "proto/router.hpp"

namespace hgas::proto {

const char *locality_name(locality l) {
    switch (l) {
    case locality::same_process: return "same process";
    case locality::same_node: return "same node";
    case locality::other_node: return "other node";
    }
    return "?";
}

status router::build(const std::vector<transport::transport *> &ordered, int nranks, int me,
                     const boot::topology &topo) {
    route_.assign(nranks, nullptr);
    loc_.assign(nranks, locality::other_node);
    for (int p = 0; p < nranks; ++p) {
        loc_[p] = p == me ? locality::same_process
                          : topo.node_of[p] == topo.node_me ? locality::same_node : locality::other_node;
        for (auto *t : ordered)
            if (t->can_reach(p)) {
                route_[p] = t;
                break;
            }
        if (!route_[p]) {
            std::string names;
            for (auto *t : ordered) names += std::string(names.empty() ? "" : ",") + t->name();
            return fail(status::unsupported,
                        "no transport reaches rank %d (%s) from rank %d: enabled transports are '%s'; rank %d is "
                        "on another node, which needs 'ucx' in HGAS_TRANSPORTS and a build with UCX",
                        p, locality_name(loc_[p]), me, names.c_str(), p);
        }
    }
    return status::ok;
}

std::string planned_path(const std::vector<std::string> &transports, locality l, bool ucx_built) {
    for (const auto &t : transports) {
        if (t == "self" && l == locality::same_process) return t;
        if (t == "shm" && l != locality::other_node) return t;
        if (t == "ucx" && ucx_built) return t;
    }
    return "";
}

locality router::locality_of(int peer) const { return loc_[peer]; }

std::string router::path_for(locality l) const {
    for (size_t p = 0; p < loc_.size(); ++p)
        if (loc_[p] == l) return route_[p] ? route_[p]->name() : "";
    return "";
}

}  // namespace hgas::proto
