#include "msg/layout.hpp"

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "msg/msg.hpp"
#include "rma/rma.hpp"

namespace hgas::msg {

namespace {
constexpr uint64_t max_bytes = 1ull << 48;

bool mul_ok(uint64_t a, uint64_t b, uint64_t &out) {
    if (a && b > max_bytes / a) return false;
    out = a * b;
    return true;
}

// Sets l.contig_at when the layout's blocks, in packing order, follow each other in memory.
// Strided shapes: each dimension with more than one step must step by exactly what the
// dimensions inside it cover; indexed: block i+1 starts where block i ends.
void find_contiguous(layout &l) {
    l.contig_at = -1;
    if (!l.blocks.empty()) {
        for (size_t i = 1; i < l.blocks.size(); ++i)
            if (l.blocks[i].first != l.blocks[i - 1].first + l.blocks[i - 1].second) return;
        l.contig_at = static_cast<int64_t>(l.blocks.front().first);
        return;
    }
    uint64_t covered = l.block;  // bytes the inner dimensions span, contiguously so far
    for (int d = 0; d < 3; ++d) {
        if (l.n[d] <= 1) continue;
        if (l.s[d] != covered) return;
        covered *= l.n[d];
    }
    l.contig_at = static_cast<int64_t>(l.base);
}
}  // namespace

result<layout> make_vector(size_t count, size_t block, size_t stride) {
    const char *op = "hgas_layout_vector";
    if (count == 0 || block == 0)
        return fail(status::invalid_arg, "%s: count %zu and block %zu bytes must both be positive", op, count, block);
    if (stride < block)
        return fail(status::invalid_arg, "%s: stride %zu is smaller than the block (%zu bytes): blocks would overlap",
                    op, stride, block);
    layout l;
    l.n[0] = count;
    l.s[0] = stride;
    l.block = block;
    uint64_t span;
    if (!mul_ok(count - 1, stride, span) || !mul_ok(count, block, l.packed) || span + block > max_bytes)
        return fail(status::invalid_arg, "%s: %zu blocks of stride %zu bytes is not a plausible size", op, count, stride);
    l.extent = span + block;
    find_contiguous(l);
    return l;
}

result<layout> make_indexed(size_t count, const size_t *len, const size_t *displ) {
    const char *op = "hgas_layout_indexed";
    if (count == 0) return fail(status::invalid_arg, "%s: count is 0 (a layout needs at least one block)", op);
    if (!len || !displ) return fail(status::invalid_arg, "%s: the block lengths or displacements array is NULL", op);
    layout l;
    std::vector<std::pair<uint64_t, uint64_t>> sorted;
    for (size_t i = 0; i < count; ++i) {
        if (len[i] > max_bytes || displ[i] > max_bytes)
            return fail(status::invalid_arg, "%s: block %zu (%zu bytes at %zu) is not a plausible size", op, i, len[i],
                        displ[i]);
        if (!len[i]) continue;
        l.blocks.emplace_back(displ[i], len[i]);
        l.packed += len[i];
        l.extent = std::max<uint64_t>(l.extent, displ[i] + len[i]);
    }
    if (l.blocks.empty()) return fail(status::invalid_arg, "%s: every block has length 0", op);
    find_contiguous(l);
    sorted = l.blocks;
    std::sort(sorted.begin(), sorted.end());
    for (size_t i = 1; i < sorted.size(); ++i)
        if (sorted[i].first < sorted[i - 1].first + sorted[i - 1].second)
            return fail(status::invalid_arg, "%s: blocks [%llu, +%llu) and [%llu, +%llu) overlap", op,
                        (unsigned long long)sorted[i - 1].first, (unsigned long long)sorted[i - 1].second,
                        (unsigned long long)sorted[i].first, (unsigned long long)sorted[i].second);
    return l;
}

result<layout> make_subarray3d(const size_t sizes[3], const size_t sub[3], const size_t starts[3], size_t elem) {
    const char *op = "hgas_layout_subarray3d";
    if (!sizes || !sub || !starts) return fail(status::invalid_arg, "%s: sizes, subsizes or starts is NULL", op);
    if (!elem) return fail(status::invalid_arg, "%s: the element size is 0", op);
    for (int d = 0; d < 3; ++d) {
        if (!sizes[d] || !sub[d])
            return fail(status::invalid_arg, "%s: dimension %d has size %zu and subsize %zu; both must be positive", op, d,
                        sizes[d], sub[d]);
        if (starts[d] > sizes[d] || sub[d] > sizes[d] - starts[d])
            return fail(status::invalid_arg, "%s: dimension %d: start %zu + subsize %zu exceeds its size %zu", op, d,
                        starts[d], sub[d], sizes[d]);
    }
    uint64_t total;
    if (!mul_ok(sizes[0], sizes[1], total) || !mul_ok(total, sizes[2], total) || !mul_ok(total, elem, total))
        return fail(status::invalid_arg, "%s: %zu x %zu x %zu elements of %zu bytes is not a plausible size", op, sizes[0],
                    sizes[1], sizes[2], elem);
    layout l;  // C order: dimension 2 varies fastest; each row of the subarray is one block
    const uint64_t row = sizes[2] * elem, plane = sizes[1] * row;
    l.base = starts[0] * plane + starts[1] * row + starts[2] * elem;
    l.n[2] = sub[0];
    l.s[2] = plane;
    l.n[1] = sub[1];
    l.s[1] = row;
    l.block = sub[2] * elem;
    l.packed = sub[0] * sub[1] * l.block;
    l.extent = total;
    find_contiguous(l);
    return l;
}

// Device buffers: every block is one copy on the device's stream 0, all submitted before one
// wait, so the copy engine gathers (scatters) the whole layout in one go. A block the device
// serves off the stream (its copy agent) returns a ticket of its own, waited for too: the
// stream's mark does not cover it.
static status device_gather(core::rank &r, gpu::device *d, const layout &l, char *dst, const char *src, bool pack) {
    uint64_t packed_off = 0;
    status err = status::ok;
    std::vector<gpu::ticket> own;
    l.each([&](uint64_t off, uint64_t len) {
        if (err != status::ok) return;
        auto t = pack ? d->copy_async(dst + packed_off, src + off, len, 0, false)
                      : d->copy_async(dst + off, src + packed_off, len, 0, false);
        if (!t.ok()) err = t.error();
        else if (t->seq) own.push_back(*t);
        packed_off += len;
    });
    HGAS_TRY(err);
    HGAS_TRY_ASSIGN(gpu::ticket t, d->mark(0));
    own.push_back(t);
    status terr = status::ok;
    size_t next = 0;  // tickets before it have completed
    HGAS_TRY(r.wait(pack ? "packing a device layout" : "unpacking a device layout", [&] {
        for (; next < own.size(); ++next) {
            auto done = d->test(own[next]);
            if (!done.ok()) {
                terr = done.error();
                return true;
            }
            if (!*done) return false;
        }
        return true;
    }));
    return terr;
}

static uint64_t block_count(const layout &l) {
    return l.blocks.empty() ? l.n[0] * l.n[1] * l.n[2] : l.blocks.size();
}

// Block k of the layout (strided shapes in the order of `each`).
static void block_at(const layout &l, uint64_t k, uint64_t &off, uint64_t &len) {
    if (!l.blocks.empty()) {
        off = l.blocks[k].first;
        len = l.blocks[k].second;
        return;
    }
    const uint64_t i0 = k % l.n[0], rest = k / l.n[0], i1 = rest % l.n[1], i2 = rest / l.n[1];
    off = l.base + i2 * l.s[2] + i1 * l.s[1] + i0 * l.s[0];
    len = l.block;
}

// Copies packed bytes [c.done, to) between a host buffer and its packed form, going on from
// where the cursor stopped (a block may be split between two calls).
void cursor::step(const layout &l, char *buf, char *packed, uint64_t to, bool pack) {
    const uint64_t nb = block_count(l);
    while (done < to && k < nb) {
        uint64_t off, len;
        block_at(l, k, off, len);
        const uint64_t n = std::min(len - within, to - done);
        if (pack) std::memcpy(packed + done, buf + off + within, n);
        else std::memcpy(buf + off + within, packed + done, n);
        done += n;
        within += n;
        if (within == len) {
            ++k;
            within = 0;
        }
    }
}

status pack(core::rank &r, const layout &l, const void *buf, char *out) {
    const mem::kind k = r.kind_of(buf, l.extent);
    const char *b = static_cast<const char *>(buf);
    std::vector<char> whole;
    if (k != mem::kind::host) {
        // Few blocks: the copy engine gathers them. Many small ones (a strided face): one copy
        // of the span they lie in, then the CPU gathers; a copy per block would cost more than
        // the span (unpacking always copies block by block: bytes between blocks are not ours
        // to write back).
        if (block_count(l) <= 256 || l.extent > 8 * l.packed + (1 << 20))
            return device_gather(r, r.device(k), l, out, b, true);
        whole.resize(l.extent);
        proto::staging *st = r.staging();
        if (!st) return fail(status::internal, "packing a device layout without the staging area");
        HGAS_TRY(st->copy(whole.data(), mem::kind::host, b, k, l.extent));
        b = whole.data();
    }
    uint64_t o = 0;
    l.each([&](uint64_t off, uint64_t len) {
        std::memcpy(out + o, b + off, len);
        o += len;
    });
    return status::ok;
}

status unpack(core::rank &r, const layout &l, const char *in, void *buf) {
    const mem::kind k = r.kind_of(buf, l.extent);
    if (k != mem::kind::host) return device_gather(r, r.device(k), l, static_cast<char *>(buf), in, false);
    char *b = static_cast<char *>(buf);
    uint64_t o = 0;
    l.each([&](uint64_t off, uint64_t len) {
        std::memcpy(b + off, in + o, len);
        o += len;
    });
    return status::ok;
}

namespace {

// Device buffers: the packed message lives in device scratch of the buffer's kind, taken from
// the rank's local heap of that kind (so that the message leaves from, and arrives in, a
// segment: a peer that maps it reads it once; others get it through the pinned pool), followed
// by an indexed layout's block table. Packing and unpacking are one kernel on an internal
// stream (cuda), or the copy engine block by block (sim, which has no kernels).
constexpr int pack_stream = 3;  // an internal stream of its own (modulo the device's streams)

struct scratch {
    core::rank *r = nullptr;
    uint16_t seg = 0;
    uint64_t off = 0;
    char *p = nullptr;
    uint64_t *table = nullptr;  // indexed layouts: (buf offset, packed offset, bytes) triples
    ~scratch() {
        if (p) (void)r->heap(seg).release(off);
    }
};

// nullptr (and no error) when the local heap has no room: the caller packs through host memory.
std::unique_ptr<scratch> take_scratch(core::rank &r, mem::kind k, const layout &l) {
    const uint64_t packed = (l.packed + 255) / 256 * 256;
    const uint64_t bytes = packed + l.blocks.size() * 24;
    const uint16_t seg = mem::local_segment(k);
    if (!r.own_size(seg)) return nullptr;
    auto off = r.heap(seg).allocate(bytes ? bytes : 1, 256);
    if (!off.ok()) {
        clear_last_error();
        return nullptr;
    }
    auto sc = std::make_unique<scratch>();
    sc->r = &r;
    sc->seg = seg;
    sc->off = *off;
    sc->p = r.own_base(seg) + *off;
    if (!l.blocks.empty()) sc->table = reinterpret_cast<uint64_t *>(sc->p + packed);
    return sc;
}

// Packs buf's layout into sc->p (unpack: the other way), both device memory of kind k, and
// waits for it.
status device_pack(core::rank &r, mem::kind k, const layout &l, scratch &sc, char *buf, bool unpack) {
    gpu::device *d = r.device(k);
    if (d->which() != gpu::kind::cuda)  // no kernels: the copy engine, block by block
        return device_gather(r, d, l, unpack ? buf : sc.p, unpack ? sc.p : buf, !unpack);
    gpu::device::blocks b;
    std::vector<uint64_t> table;
    if (!l.blocks.empty()) {
        uint64_t po = 0;
        for (const auto &bl : l.blocks) {
            table.insert(table.end(), {bl.first, po, bl.second});
            po += bl.second;
        }
        b.table = sc.table;
        b.count = l.blocks.size();
    } else {
        b.base = l.base;
        b.block = l.block;
        for (int i = 0; i < 3; ++i) {
            b.n[i] = l.n[i];
            b.s[i] = l.s[i];
        }
    }
    const int stream = pack_stream % d->streams();
    if (!table.empty()) {
        auto ct = d->copy_async(sc.table, table.data(), table.size() * 8, stream, false);
        if (!ct.ok()) return ct.error();
    }
    auto t = d->gather(sc.p, buf, b, unpack, stream);
    if (!t.ok()) return t.error();
    status terr = status::ok;
    HGAS_TRY(r.wait(unpack ? "unpacking a device layout" : "packing a device layout", [&] {
        auto done = d->test(*t);
        if (!done.ok()) {
            terr = done.error();
            return true;
        }
        return *done;
    }));
    return terr;
}

// A typed message of a host buffer packs (unpacks) piece by piece as the message layer reads
// (delivers) the packed bytes, so packing the next piece overlaps the transfer of the last.
struct host_pipe final : producer, consumer {
    const layout *l = nullptr;
    char *buf = nullptr, *packed = nullptr;
    cursor c;
    status ensure(size_t upto) override {
        c.step(*l, buf, packed, upto, true);
        return status::ok;
    }
    status arrived(size_t upto) override {
        c.step(*l, buf, packed, upto, false);
        return status::ok;
    }
};

// A typed message in flight: the packed bytes and the contiguous message's handle.
struct typed final : rma::completion {
    std::unique_ptr<scratch> sc;  // device buffers: the packed bytes in device memory
    mem::kind kind = mem::kind::host;
    std::vector<char> packed;
    hgas_handle_t inner = HGAS_HANDLE_DONE;
    bool recv = false, unpacked = false;
    layout l;
    void *buf = nullptr;
    std::unique_ptr<host_pipe> pipe;  // host buffers: packed / unpacked piece by piece

    status test(core::rank &r, bool &done) override {
        done = false;
        if (inner != HGAS_HANDLE_DONE) {
            int d = 0;
            status s = rma::test(r, inner, &d);
            if (s != status::ok) {
                inner = HGAS_HANDLE_DONE;  // freed by the failed test
                return s;
            }
            if (!d) return status::ok;
            inner = HGAS_HANDLE_DONE;
        }
        if (recv && !unpacked) {
            unpacked = true;
            if (sc) HGAS_TRY(device_pack(r, kind, l, *sc, static_cast<char *>(buf), true));
            else if (pipe) HGAS_TRY(pipe->arrived(l.packed));  // what the message layer did not deliver piecewise
            else HGAS_TRY(unpack(r, l, packed.data(), buf));
        }
        sc.reset();
        done = true;
        return status::ok;
    }
    ~typed() override {
        // A handle dropped before completion: its message still needs the packed bytes.
        if (inner != HGAS_HANDLE_DONE)
            if (core::rank *r = core::current()) (void)rma::wait(*r, inner);
    }
};

status check_buf(const char *op, const void *buf, const layout &l) {
    if (!buf) return fail(status::invalid_arg, "%s: the buffer is NULL", op);
    return status::ok;
}

}  // namespace

status isend_layout(core::rank &r, const char *op, const layout &l, const void *buf, int dest, int tag,
                    hgas_handle_t *h, uint32_t ctx) {
    if (!h) return fail(status::invalid_arg, "%s: the handle pointer is NULL", op);
    HGAS_TRY(check_buf(op, buf, l));
    if (l.contig_at >= 0) {  // one block: the message layer moves it from the buffer itself
        note_typed(r, typed_path::plain);
        return isend(r, op, send_args{ctx, static_cast<const char *>(buf) + l.contig_at, l.packed, dest, tag}, h);
    }
    note_typed(r, typed_path::packed);
    auto t = std::make_unique<typed>();
    t->kind = r.kind_of(buf, l.extent);
    if (t->kind != mem::kind::host) t->sc = take_scratch(r, t->kind, l);
    if (t->sc) {
        HGAS_TRY(device_pack(r, t->kind, l, *t->sc, static_cast<char *>(const_cast<void *>(buf)), false));
        HGAS_TRY(isend(r, op, send_args{ctx, t->sc->p, l.packed, dest, tag}, &t->inner));
    } else if (t->kind == mem::kind::host) {
        // Packed as the message layer reads it: ring and pool chunks ask for their piece just
        // before they go, so the CPU packs piece k+1 while piece k is on its way.
        t->packed.resize(l.packed);
        t->l = l;
        t->pipe = std::make_unique<host_pipe>();
        t->pipe->l = &t->l;
        t->pipe->buf = static_cast<char *>(const_cast<void *>(buf));
        t->pipe->packed = t->packed.data();
        HGAS_TRY(isend(r, op, send_args{ctx, t->packed.data(), t->packed.size(), dest, tag, t->pipe.get()}, &t->inner));
    } else {
        t->packed.resize(l.packed);
        HGAS_TRY(pack(r, l, buf, t->packed.data()));
        HGAS_TRY(isend(r, op, send_args{ctx, t->packed.data(), t->packed.size(), dest, tag}, &t->inner));
    }
    if (t->inner == HGAS_HANDLE_DONE) {
        *h = HGAS_HANDLE_DONE;  // eager: the bytes are in the receiver's ring already
        return status::ok;
    }
    *h = rma::make_handle(r, std::move(t));
    return status::ok;
}

status irecv_layout(core::rank &r, const char *op, const layout &l, void *buf, int src, int tag,
                    hgas_msg_info_t *info, hgas_handle_t *h, uint32_t ctx) {
    if (!h) return fail(status::invalid_arg, "%s: the handle pointer is NULL", op);
    HGAS_TRY(check_buf(op, buf, l));
    if (l.contig_at >= 0) {  // one block: received straight into the buffer, nothing to unpack
        note_typed(r, typed_path::plain);
        return irecv(r, op, recv_args{ctx, static_cast<char *>(buf) + l.contig_at, l.packed, src, tag, info}, h);
    }
    note_typed(r, typed_path::unpacked);
    auto t = std::make_unique<typed>();
    t->recv = true;
    t->l = l;
    t->buf = buf;
    t->kind = r.kind_of(buf, l.extent);
    if (t->kind != mem::kind::host) t->sc = take_scratch(r, t->kind, l);
    if (t->sc) {
        HGAS_TRY(irecv(r, op, recv_args{ctx, t->sc->p, l.packed, src, tag, info}, &t->inner));
    } else {
        t->packed.resize(l.packed);
        recv_args a{ctx, t->packed.data(), t->packed.size(), src, tag, info};
        if (t->kind == mem::kind::host) {  // unpacked piece by piece as chunks arrive in order
            t->pipe = std::make_unique<host_pipe>();
            t->pipe->l = &t->l;
            t->pipe->buf = static_cast<char *>(buf);
            t->pipe->packed = t->packed.data();
            a.cons = t->pipe.get();
        }
        HGAS_TRY(irecv(r, op, a, &t->inner));
    }
    bool done = false;
    HGAS_TRY(t->test(r, done));
    if (done) {
        *h = HGAS_HANDLE_DONE;
        return status::ok;
    }
    *h = rma::make_handle(r, std::move(t));
    return status::ok;
}

}  // namespace hgas::msg
