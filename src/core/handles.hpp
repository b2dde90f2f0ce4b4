// The rank's table of explicit non-blocking operations (hgas_put_nb / hgas_get_nb handles).
// A handle is not a pointer the user could be left holding after it is freed: it names a
// slot and the slot's generation, (generation << 32) | (slot + 1). Completing a handle bumps
// the generation, so a handle that was already waited or tested to completion is recognised
// as consumed (and reported done at once, as MPI does for MPI_REQUEST_NULL), and a value that
// this rank never issued is recognised as foreign instead of being dereferenced.
// An operation is either a transport's request (t, p) or an object that tests itself
// (completion: a tagged message, src/msg), owned by its slot until the handle completes.
#pragma once
#include <hgas/hgas.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "transport/transport.hpp"

namespace hgas::core {

class rank;

// An operation behind a handle that is not a transport request: hgas_test/hgas_wait call its
// test() until done, then the slot deletes it.
struct completion {
    virtual ~completion() = default;
    // Advances the operation; done = true once it is finished. A failure finishes it too.
    virtual status test(rank &r, bool &done) = 0;
};

class handle_table {
public:
    struct op {
        transport::transport *t = nullptr;
        transport::pending p;  // transports may keep its address until it completes: slots do not move
        std::unique_ptr<completion> c;  // set instead of t for operations that test themselves
    };
    enum class lookup { live, consumed, foreign };

    // A new handle for an operation in flight; its state is *slot.
    hgas_handle_t issue(op **slot) {
        uint32_t i;
        if (!free_.empty()) {
            i = free_.back();
            free_.pop_back();
        } else {
            i = static_cast<uint32_t>(slots_.size());
            slots_.push_back(std::make_unique<slot_t>());
        }
        slot_t &s = *slots_[i];
        s.o = op{};
        s.live = true;
        *slot = &s.o;
        return encode(i, s.gen);
    }

    // What `h` names; `*o` is set for a live handle.
    lookup find(hgas_handle_t h, op **o) {
        const uint64_t v = reinterpret_cast<uintptr_t>(h);
        const uint64_t idx = (v & 0xffffffffu);
        const uint32_t gen = static_cast<uint32_t>(v >> 32);
        if (idx == 0 || idx > slots_.size()) return lookup::foreign;
        slot_t &s = *slots_[idx - 1];
        if (gen == s.gen && s.live) {
            *o = &s.o;
            return lookup::live;
        }
        return gen < s.gen ? lookup::consumed : lookup::foreign;
    }

    // The operation of `h` (live) is complete: its slot may be reused under a new generation.
    void release(hgas_handle_t h) {
        const uint32_t i = static_cast<uint32_t>(reinterpret_cast<uintptr_t>(h) & 0xffffffffu) - 1;
        slot_t &s = *slots_[i];
        s.live = false;
        s.o.c.reset();
        ++s.gen;
        free_.push_back(i);
    }

private:
    static_assert(sizeof(hgas_handle_t) == 8, "a handle holds a 32-bit slot and a 32-bit generation");
    struct slot_t {
        op o;
        uint32_t gen = 1;
        bool live = false;
    };
    static hgas_handle_t encode(uint32_t i, uint32_t gen) {
        return reinterpret_cast<hgas_handle_t>(static_cast<uintptr_t>(gen) << 32 | (static_cast<uintptr_t>(i) + 1));
    }
    std::vector<std::unique_ptr<slot_t>> slots_;
    std::vector<uint32_t> free_;
};

}  // namespace hgas::core
