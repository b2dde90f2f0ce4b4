// MG's communication: comm3 (the periodic ghost layers of a split level, exchanged with the
// neighbours by put-with-signal) and the gather of a split level onto every rank, where the
// levels below it are replicated.
#pragma once

#include <hgas/hgas.h>

#include <cstdint>
#include <vector>

#include "backend.hpp"
#include "geometry.hpp"

namespace mg {

enum class kind { host, sim, cuda };
const char *kind_name(kind k);

/// Time of a run by phase, seconds (this rank).
struct phases {
    double compute = 0;  // the operators (on the GPU: until their stream is done)
    double comm = 0;     // packing, puts, unpacking, the gather
    double wait = 0;     // waiting for the neighbours' signals
};

class exchange {
public:
    /// Collective: receive buffers of kind `k` for the faces of the finest level (3 axes x 2
    /// sides x 2 slots) and their signal words.
    exchange(backend &be, const decomp &d, kind k);
    ~exchange();
    exchange(const exchange &) = delete;
    exchange &operator=(const exchange &) = delete;

    /// NPB's comm3 on a split level: the ghost layers of b from the neighbours along i1, then
    /// i2 (ghosts of i1 included), then i3 (all), so that edges and corners arrive too. Along a
    /// dimension that is not split, a periodic copy on this rank.
    void comm3(box b, phases &ph);
    /// comm3 of a replicated level: every ghost layer a periodic copy.
    void periodic(box b);
    /// The whole level-k grid (2^k per dimension, ghosts filled) on every rank, from every
    /// rank's block `b`. Collective.
    void gather(box b, int k, box whole, phases &ph);

private:
    double *recv_slot(int axis, int side, uint64_t seq);
    void wait(int axis, int side, uint64_t value, phases &ph);

    backend &be_;
    decomp d_;
    kind kind_;
    size_t face_ = 0;             // doubles per face buffer (the finest level's largest face)
    double *recv_ = nullptr;      // symmetric, kind_: [axis][side][slot][face_]
    double *send_ = nullptr;      // backend scratch: [side][face_]
    uint64_t *sig_ = nullptr;     // symmetric host: [axis][side] one per 64 bytes
    uint64_t seq_ = 0;            // comm3 calls on split levels so far (the same on every rank)
    std::vector<double> staging_;  // kind sim: faces read back with hgas_get
    double *gather_ = nullptr;    // symmetric host: ranks x block, for hgas_fcollect
    size_t gather_count_ = 0;
    double *gscratch_ = nullptr;  // backend scratch: one block
    std::vector<double> block_;
};

}  // namespace mg
