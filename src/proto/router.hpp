// Path choice. For now every path is host memory to host memory, so a path is the transport
// that reaches a peer: the first in HGAS_TRANSPORTS order that can reach it. The table is
// built once at init; per operation the choice is one array load.
#pragma once
#include <string>
#include <vector>

#include "transport/transport.hpp"

namespace hgas::proto {

enum class locality { same_process, same_node, other_node };
const char *locality_name(locality l);

// The transport that will serve a kind of peer, from HGAS_TRANSPORTS alone (before init;
// what hgas-info prints): self reaches the rank itself, shm its node, ucx everything.
std::string planned_path(const std::vector<std::string> &transports, locality l, bool ucx_built);

class router {
public:
    // `ordered`: transports in preference order (already connected).
    status build(const std::vector<transport::transport *> &ordered, int nranks, int me,
                 const boot::topology &topo);
    transport::transport *route(int peer) const { return route_[peer]; }
    // The transport chosen for a kind of peer, for hgas-info ("" if none can reach it).
    std::string path_for(locality l) const;
    locality locality_of(int peer) const;

private:
    std::vector<transport::transport *> route_;
    std::vector<locality> loc_;
};

}  // namespace hgas::proto
