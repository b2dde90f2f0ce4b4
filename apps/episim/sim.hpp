// One simulation run on this rank: its persons' schedules and states, its locations' arrays on
// the device, the two message streams (visits to locations, infections back to persons), and
// the day loop in the chosen style.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "device.hpp"
#include "options.hpp"
#include "population.hpp"
#include "stream.hpp"

namespace episim {

struct Phases {  // seconds, summed over days
    double visits = 0, visit_comm = 0, interact = 0, inf_comm = 0, update = 0;
};

struct DayCounts {  // over all ranks
    uint64_t new_inf = 0, s = 0, e = 0, i = 0, r = 0;
};

class Sim {
public:
    Sim(const Options &o, Device &dev, hgas_msg_ctx_t ctx);
    ~Sim();
    DayCounts initial_counts();
    DayCounts day(uint32_t d);
    void close();
    Phases phases;
    uint64_t visits_sent = 0, infections_sent = 0;  // this rank's, over the days
    size_t device_fragment_bytes() const { return visit_rx_->buffer_bytes() * (o_.st == style::integrated); }

private:
    DayCounts count(uint64_t new_inf);
    void merge_runs(uint64_t end, bool all);
    const Options &o_;
    const Config &c_;
    Device &dev_;
    Partition part_;
    int me_, n_;
    uint64_t p0_, p1_;  // this rank's persons
    Schedules sched_;
    std::vector<uint8_t> state_;
    std::vector<uint32_t> until_;  // last day in the current state (E, I)
    uint64_t cap_ = 0;             // visits this rank can receive in a day (all ranks agree)
    Visit *dvis_ = nullptr;        // device memory
    Infection *dinf_ = nullptr;    // device memory
    std::vector<Visit> out_;       // the day's visit messages, grouped by destination rank
    // The schedules' visits grouped by the rank owning their location (indices into
    // sched_.visits, each rank's in schedule order): the owners never change, so computeVisits
    // is one pass over them.
    std::vector<uint32_t> route_;
    std::vector<uint64_t> route_off_;
    std::vector<char> hstage_;     // basic: host staging of the whole day's visits / infections
    std::vector<Infection> got_;   // infections received for this rank's persons
    std::vector<uint64_t> runs_;   // integrated: starts of the sorted runs of the day's visits
    std::unique_ptr<Receiver> visit_rx_, inf_rx_;
    std::unique_ptr<Sender> visit_tx_, inf_tx_;
};

}  // namespace episim
