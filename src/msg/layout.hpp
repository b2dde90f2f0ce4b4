// Derived layouts for typed messages (hgas_layout_t): vector, indexed and 3-D subarray shapes of
// bytes in a buffer, packed into a contiguous message at the sender and unpacked at the receiver.
// Host buffers are packed by the CPU; device buffers by the device's copy engine (one gather of
// every block into a host staging buffer, submitted at once on an internal stream and waited
// for once), so a strided halo face of device memory never makes the program copy by hand.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include <hgas/hgas.h>

#include "core/rank.hpp"

namespace hgas::msg {

struct layout {
    // Blocks of `block` bytes at offset i2*s2 + i1*s1 + i0*s0 for i2 < n2, i1 < n1, i0 < n0
    // (strided shapes), or the explicit blocks of an indexed shape.
    uint64_t base = 0, n[3] = {1, 1, 1}, s[3] = {0, 0, 0}, block = 0;
    std::vector<std::pair<uint64_t, uint64_t>> blocks;  // indexed: (offset, length)
    uint64_t packed = 0;  // bytes of the message
    uint64_t extent = 0;  // bytes of the buffer the layout spans from its start
    // The layout's bytes are one contiguous block at this offset (vector with stride == block or
    // count 1, a subarray whose rows and planes abut, indexed blocks that follow each other in
    // order): typed messages then send and receive [buf + contig_at, + packed) as plain bytes,
    // nothing packed on any kind. -1: not contiguous.
    int64_t contig_at = -1;

    template <class F>
    void each(F f) const {  // f(offset in buffer, length)
        if (!blocks.empty()) {
            for (const auto &b : blocks) f(b.first, b.second);
            return;
        }
        if (!block) return;
        for (uint64_t i2 = 0; i2 < n[2]; ++i2)
            for (uint64_t i1 = 0; i1 < n[1]; ++i1)
                for (uint64_t i0 = 0; i0 < n[0]; ++i0) f(base + i2 * s[2] + i1 * s[1] + i0 * s[0], block);
    }
};

// Where a piecewise pack or unpack of a host buffer stands: block k, `within` bytes into it,
// `done` packed bytes so far.
struct cursor {
    uint64_t k = 0, within = 0, done = 0;
    // Packs (pack) or unpacks packed bytes [done, to) of buf.
    void step(const layout &l, char *buf, char *packed, uint64_t to, bool pack);
};

result<layout> make_vector(size_t count, size_t block_bytes, size_t stride_bytes);
result<layout> make_indexed(size_t count, const size_t *block_bytes, const size_t *displ_bytes);
result<layout> make_subarray3d(const size_t sizes[3], const size_t subsizes[3], const size_t starts[3], size_t elem);

// Packs [buf, layout) into `out` (layout.packed bytes of host memory) / unpacks it back.
status pack(core::rank &r, const layout &l, const void *buf, char *out);
status unpack(core::rank &r, const layout &l, const char *in, void *buf);

// Typed messages: the layout's bytes of `buf` travel as one message of layout.packed bytes (a
// receive may use another layout with as many bytes, or a plain buffer). Handles as isend/irecv.
// `ctx`: the scope (hgas_msg_ctx_t; 0 is HGAS_MSG_CTX_WORLD).
status isend_layout(core::rank &r, const char *op, const layout &l, const void *buf, int dest, int tag,
                    hgas_handle_t *h, uint32_t ctx = 0);
status irecv_layout(core::rank &r, const char *op, const layout &l, void *buf, int src, int tag,
                    hgas_msg_info_t *info, hgas_handle_t *h, uint32_t ctx = 0);

}  // namespace hgas::msg
