// The halo exchange of one phase (velocities before the stress update, stresses before the
// velocity update) in the three styles of README.md: basic, pipelined, integrated.
#pragma once

#include <hgas/hgas.h>

#include <vector>

#include "device.hpp"

namespace seismic {

// One face message: the boundary face of `field` sent to `send_to`, and the same field's
// face from the opposite neighbour `recv_from` into the halo on that side.
struct face {
    size_t offset, rows, stride;  // in floats; rows of nx floats
};
struct message {
    int field, tag;
    int send_to, recv_from;  // -1: none on that side
    face send, recv;
    hgas_layout_t send_layout = nullptr, recv_layout = nullptr;  // integrated
    void *sbuf = nullptr, *rbuf = nullptr;                        // basic, pipelined
};

class exchange {
public:
    enum phase { velocities = 0, stresses = 1 };
    exchange(const setup &s, device &d);
    ~exchange();
    exchange(const exchange &) = delete;
    exchange &operator=(const exchange &) = delete;
    void run(phase p);
    // Styles integrated and pipelined with overlap, in three calls: start posts the phase's
    // receives and sends (pipelined: its receives and the first face copies), poll lets them
    // progress (called between planes of the interior update; pipelined: sends the pieces whose
    // copies are done, copies back those that arrived), finish waits for them. run(p) is
    // start(p) then finish(); basic has no start: run(p) only.
    void start(phase p);
    void poll();
    void finish();
    size_t bytes_per_step() const { return bytes_; }  // sent by this rank, both phases

private:
    void basic(std::vector<message> &ms);
    void pipelined_start(std::vector<message> &ms);
    bool pipelined_step();  // false: nothing moved
    void pipelined_finish();
    void integrated_post(std::vector<message> &ms);
    int stream_of(int peer) const;

    const setup &s_;
    device &d_;
    std::vector<message> phase_[2];
    size_t bytes_ = 0;
    std::vector<hgas_handle_t> hs_;
    // The pipelined phase in flight: its pieces (rows of a face), handles and what is done.
    struct piece { message *m; size_t row0, rows; int ev; };
    struct pipe {
        std::vector<piece> sends, recvs;
        std::vector<hgas_handle_t> rh, sh;
        std::vector<char> unpacked;
        size_t sent = 0, received = 0;
        bool active = false;
    } pipe_;
};

}  // namespace seismic
