// Where the members of a team that are rank threads of one process meet on the host at a
// collective (gpu.hpp, team_group_call): every member leaves its vector, its output and an
// event its stream recorded at the call; the last to arrive runs `launch` with all of them (on
// its stream: a wait for each other member's event, the one kernel, an event that says it is
// done) and hands that event to the others, whose streams then wait for it. Every wait on the
// GPU is then for work issued before it, so no sharing of the GPU's work queues between the
// members' streams can make two of them wait for each other (docs/threads.md, "Team kernels of
// rank threads share the GPU's work queues").
// Nothing here calls CUDA: events and streams are opaque, so the meeting is tested on the CPU.
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include "base/status.hpp"

namespace hgas::gpu {

class team_meet {
public:
    struct member {
        const void *in = nullptr;  // the member's vector once its stream reaches the call
        void *out = nullptr;       // its output
        void *ready = nullptr;     // an event its stream recorded at the call
        void *stream = nullptr;    // that stream
        int gpu = -1;              // the ordinal of its GPU
        // The call's arguments, compared whole (not a hash: a collision would let a member's
        // count overrun another's vectors): members that differ from member 0 fail.
        struct arguments {
            int what = 0, root = 0, type = 0, op = 0;
            size_t count = 0;
            bool operator==(const arguments &o) const {
                return what == o.what && root == o.root && type == o.type && op == o.op && count == o.count;
            }
        } args;
        bool usable = false;       // its vectors are device memory
        bool broken = false;       // it could not record `ready` (a CUDA failure): nothing runs
    };
    struct outcome {
        bool last = false;     // this member ran `launch`
        void *done = nullptr;  // the event that says the call is done; nullptr: nothing ran
        int mismatch = -1;     // a member whose arguments differ from member 0's: nothing ran
        int broken = -1;       // a member that could not take part: nothing ran
    };
    // Runs once per call, by the last member to arrive, with every member's entry (index: the
    // member's number in the team), unless a member is broken or the arguments differ.
    // Returns the done event, or nullptr where it ran nothing (every member then takes another
    // path), or an error every member returns; it cleans up after itself when it fails.
    using launcher = std::function<result<void *>(const std::vector<member> &)>;
    // What the rank does while its thread waits (rank::wait's step: progress, the device
    // proxy's requests, the API lock for the rank's other threads, a look at whether the job
    // is alive), called now and then without the meeting's lock. An error ends the wait with
    // it. Empty: nothing.
    using progress_fn = std::function<status()>;

    static team_meet &process();

    // Member `me` of `n` arrives at call `key` (the same on every member: which team, which
    // call). Returns when every member has arrived and the last has run `launch` (or found that
    // nothing must run). Fails after `timeout_s` naming the members that did not come (it
    // withdraws: a late member then waits and fails in turn), or naming the last member if
    // `launch` has not returned by then, or with `progress`'s error; a failed member has left.
    // A launch that throws fails every member. `what` names the call in messages.
    result<outcome> arrive(uint64_t key, int n, int me, const member &m, double timeout_s, const launcher &launch,
                           const char *what, const progress_fn &progress = {});
    // After a successful arrive, once the member's stream waits for `done`: the call is over for
    // this member. True for the last member to leave, which then releases the done event. (A
    // failed arrive has left already.)
    bool leave(uint64_t key);

    // Calls open now (tests: none once every member has left).
    size_t open_calls();

    struct call;  // one call's meeting (team_meet.cpp)

private:
    team_meet() = default;
};

}  // namespace hgas::gpu
