// The queue of stream-ordered collectives (stream.hpp).
#include "coll/stream.hpp"

#include <deque>
#include <string>

#include "base/log.hpp"
#include "coll/direct.hpp"

namespace hgas::coll {

namespace {

constexpr uint64_t max_outstanding = 256;

struct call {
    uint64_t seq;
    const char *op;
    std::function<status()> run;
};

// The words of call seq are slot seq % max_outstanding of a ring in the local host heap
// (allocated at the first call, 16 bytes a slot): a slot is reused max_outstanding calls later,
// as the stream-ordered messages' words are.
struct queue {
    core::rank *r = nullptr;
    std::deque<call> calls;
    uint64_t next_seq = 1;
    uint64_t ring = 0;
    bool have_ring = false;
    status err = status::ok;
    std::string err_msg;
    uint64_t *word(uint64_t seq, int which) const {
        return reinterpret_cast<uint64_t *>(r->own_base(mem::seg_local) + ring) + 2 * (seq % max_outstanding) + which;
    }
};

const char tag = 0;  // the key of the queue among the rank's attachments

queue &of(core::rank &r) {
    auto &a = r.attachments()[&tag];
    if (!a.value) {
        auto *q = new queue;
        q->r = &r;
        a.value = q;
        a.release = [](void *p) { delete static_cast<queue *>(p); };
    }
    return *static_cast<queue *>(a.value);
}

}  // namespace

result<stream_slot> stream_enqueue(core::rank &r, const char *op, std::function<status()> run) {
    queue &q = of(r);
    if (q.calls.size() >= max_outstanding)
        return fail(status::no_memory, "%s: rank %d has %llu stream-ordered collectives outstanding, the most there can "
                    "be; let the streams reach them first (hgas_stream_sync)", op, r.me(),
                    static_cast<unsigned long long>(max_outstanding));
    if (!q.have_ring) {
        auto off = r.local_heap().allocate(16 * max_outstanding, 64);
        if (!off.ok())
            return fail(status::no_memory, "%s: no room for %llu bytes in this rank's local host heap "
                        "(HGAS_LOCAL_HEAP_SIZE)", op, static_cast<unsigned long long>(16 * max_outstanding));
        q.ring = *off;
        q.have_ring = true;
    }
    call c{q.next_seq++, op, std::move(run)};
    __atomic_store_n(q.word(c.seq, 0), 0, __ATOMIC_RELAXED);
    __atomic_store_n(q.word(c.seq, 1), 0, __ATOMIC_RELEASE);
    stream_slot s{c.seq, q.word(c.seq, 0), q.word(c.seq, 1)};
    q.calls.push_back(std::move(c));
    return s;
}

void stream_cancel(core::rank &r, uint64_t seq) {
    queue &q = of(r);
    for (auto it = q.calls.begin(); it != q.calls.end(); ++it)
        if (it->seq == seq) {
            q.calls.erase(it);
            return;
        }
}

bool stream_ready(core::rank &r) {
    queue &q = of(r);
    if (q.calls.empty()) return false;
    const uint64_t seq = q.calls.front().seq, go = __atomic_load_n(q.word(seq, 0), __ATOMIC_ACQUIRE);
    return go == seq || go == ~seq;
}

void stream_pump(core::rank &r) {
    queue &q = of(r);
    while (stream_ready(r)) {
        call c = std::move(q.calls.front());
        q.calls.pop_front();
        // ~seq: the stream's wait gave up (HGAS_TIMEOUT) before the stream reached the call.
        const bool expired = __atomic_load_n(q.word(c.seq, 0), __ATOMIC_ACQUIRE) == ~c.seq;
        const status s = expired ? fail(status::timeout, "%s: the stream waited HGAS_TIMEOUT for this rank to run the "
                                        "collective and went on without it (the rank runs stream-ordered collectives "
                                        "while it waits in hgas_stream_sync)", c.op)
                                 : c.run();
        if (s != status::ok) {
            HGASI_WARN("coll", "a stream-ordered %s of rank %d failed: %s", c.op, r.me(), last_error().c_str());
            if (q.err == status::ok) {
                q.err = s;
                q.err_msg = last_error();
            }
        }
        // The stream goes on: its later work sees the results (after a failure, the error
        // waits in stream_status).
        __atomic_store_n(q.word(c.seq, 1), c.seq, __ATOMIC_RELEASE);
    }
}

status stream_status(core::rank &r) {
    HGAS_TRY(detail::kernel_stream_status(r));  // a stream-ordered collective kernel that failed
    queue &q = of(r);
    const status s = q.err;
    if (s == status::ok) return s;
    q.err = status::ok;
    return fail(s, "%s", q.err_msg.c_str());
}

}  // namespace hgas::coll
