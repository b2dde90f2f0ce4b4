// The C API: argument plumbing from hgas.h to the semantics layers, nothing else.
#include <hgas/hgas.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unistd.h>
#include <vector>

#include "api/enum_arg.hpp"
#include "api/rank_guard.hpp"
#include "api/testing.h"
#include "api/thread_attach.hpp"
#include "base/clock.hpp"
#include "base/log.hpp"
#include "coll/coll.hpp"
#include "coll/symmetric.hpp"
#include "core/rank.hpp"
#include "mem/static_data.hpp"
#include "msg/msg.hpp"
#include "rma/rma.hpp"
#include "sync/sync.hpp"

using namespace hgas;

namespace {
// The trace fields of a one-sided operation (HGAS_TRACE): bytes, the peer, the target's kind and
// the path: load/store where the target is mapped into this process, else the transport.
void rma_fields(trace::span &sp, hgas_gptr_t p, size_t bytes) {
    trace::fields &f = sp.args();
    f.bytes = bytes;
    f.peer = static_cast<int32_t>(p.rank);
    f.kind = static_cast<int8_t>(hgas_gptr_kind(p));
    f.path = hgas_local_addr(p) ? 0 : 1;
}
}  // namespace

namespace {
// Set once a rank of this process has left its job (hgas_finalize). Process state, not rank
// state: the job's bootstrap store has closed this process's membership, so joining again
// would wait for HGAS_BOOT_TIMEOUT and fail with a message about the store.
std::atomic<bool> g_left_job{false};

using api::enum_arg;

}  // namespace

extern "C" {

const char *hgas_error_string(hgas_status_t s) { return status_name(static_cast<status>(s)); }
const char *hgas_last_error(void) { return last_error().c_str(); }

hgas_status_t hgas_init(void) { return hgas_init_thread(HGAS_THREAD_SERIALIZED, nullptr); }

int hgas_query_thread(void) {
    core::rank *r = core::current();
    return r ? r->thread_level() : -1;
}

hgas_status_t hgas_init_thread(int requested, int *provided) {
    if (requested < HGAS_THREAD_SINGLE || requested > HGAS_THREAD_MULTIPLE)
        return to_c(fail(status::invalid_arg, "hgas_init_thread: %d is not a thread level: use HGAS_THREAD_SINGLE (0), "
                         "_FUNNELED (1), _SERIALIZED (2) or _MULTIPLE (3)", requested));
    if (core::current())
        return to_c(fail(status::already_initialized, "hgas_init: this rank is already initialized; call "
                         "hgas_finalize() before initializing again"));
    if (g_left_job.load(std::memory_order_acquire))
        return to_c(fail(status::unsupported, "hgas_init: this process already left the job with hgas_finalize(); "
                         "re-initialization is not supported: call hgas_init once at the start of the program and "
                         "hgas_finalize once at its end"));
    auto r = core::rank::create(requested);
    if (!r.ok()) return to_c(r.error());
    // The message layer's state. The progress helper (HGAS_PROGRESS_THREAD=1) runs already:
    // the engine takes pollers while it does.
    if (status m = msg::attach(*r.value()); m != status::ok) return to_c(m);
    core::set_current(r.value().release());
    api::rank_started(core::current());
    const std::string &trace_path = core::current()->cfg().text(setting::trace);
    if (!trace_path.empty()) {
        // Time 0 of the trace (docs/trace.md, "Clocks"): ranks of one node share the steady
        // clock, so each takes its node leader's reading; leaders read theirs as they leave one
        // barrier, so nodes agree within that barrier's exit skew.
        core::rank &me = *core::current();
        if (status b = sync::barrier(me); b != status::ok) return to_c(b);
        uint64_t t = now_ns();
        std::vector<std::string> all;
        if (status g = me.store().allgather("trace.clock", std::to_string(t), all, me.cfg().seconds(setting::boot_timeout));
            g != status::ok)
            return to_c(g);
        int leader = me.me();
        for (int q = 0; q < me.n(); ++q)
            if (hgas_node_of(q) == hgas_node_of(me.me())) {
                leader = q;
                break;
            }
        trace::start(trace_path, me.me(), me.n(), std::stoull(all[static_cast<size_t>(leader)]));
    }
    if (provided) *provided = requested;
    return HGAS_OK;
}

hgas_status_t hgas_finalize(void) {
    core::rank *r = core::current();
    if (!r) return HGAS_OK;  // idempotent
    if (status a = api::rank_ending(r); a != status::ok) return to_c(a);
    std::string trace_err = trace::stop();  // this rank's part of the trace; hgasrun merges them
    if (!trace_err.empty()) std::fprintf(stderr, "hgas: rank %d: %s\n", r->me(), trace_err.c_str());
    status s = r->finalize();
    g_left_job.store(true, std::memory_order_release);
    core::set_current(nullptr);
    delete r;
    return to_c(s);
}

int hgas_initialized(void) { return core::current() ? 1 : 0; }
int hgas_rank_me(void) { auto *r = core::current(); return r ? r->me() : -1; }
int hgas_rank_n(void) { auto *r = core::current(); return r ? r->n() : -1; }
int hgas_node_me(void) { auto *r = core::current(); return r ? r->topo().node_me : -1; }
int hgas_node_n(void) { auto *r = core::current(); return r ? r->topo().node_n : -1; }
int hgas_local_rank(void) { auto *r = core::current(); return r ? r->topo().local_rank : -1; }
int hgas_local_n(void) { auto *r = core::current(); return r ? r->topo().local_n : -1; }
int hgas_node_of(int rank) {
    auto *r = core::current();
    if (!r || rank < 0 || rank >= r->n()) return -1;
    return r->topo().node_of[rank];
}

void hgas_abort(int code, const char *reason) {
    core::rank *r = core::current();
    const int me = r ? r->me() : -1;
    // Failing because another rank ended the job (hgas_global_exit) is part of that end.
    int exit_code = 0;
    if (r && r->store().exit_requested(&exit_code)) {
        std::fflush(nullptr);
        _exit(exit_code);
    }
    if (r) {
        std::fprintf(stderr, "hgas: rank %d called hgas_abort(%d): %s\n", me, code, reason ? reason : "");
    } else {  // no rank yet (or any more): name the process instead
        char host[256] = {};
        gethostname(host, sizeof host - 1);
        std::fprintf(stderr, "hgas: process %ld on %s called hgas_abort(%d) outside hgas_init..hgas_finalize: %s\n",
                     static_cast<long>(getpid()), host, code, reason ? reason : "");
    }
    std::fflush(stderr);
    if (r) (void)r->store().abort("rank " + std::to_string(me) + " called hgas_abort: " + (reason ? reason : ""));
    _exit(code == 0 ? 1 : code);  // no destructors: other threads may be mid-operation
}

void hgas_global_exit(int code, const char *reason) {
    core::rank *r = core::current();
    std::fflush(nullptr);  // _exit below does not flush stdio, and the output is the user's
    if (r) {
        const std::string why = reason && *reason ? reason : "hgas_global_exit(" + std::to_string(code) + ")";
        if (r->store().exit_job(code, why) != status::ok)
            HGASI_WARN("api", "hgas_global_exit: could not tell the job (%s); this rank exits with %d alone",
                       last_error().c_str(), code);
    }
    _exit(code & 0xff);  // no destructors: other threads may be mid-operation
}

hgas_status_t hgas_rank_data_set(const void *key, void *value, void (*release)(void *)) {
    HGASI_RANK(r);
    if (!key) return to_c(fail(status::invalid_arg, "hgas_rank_data_set: the key is NULL"));
    auto &all = r->attachments();
    auto it = all.find(key);
    if (it != all.end() && it->second.release && it->second.value != value) it->second.release(it->second.value);
    all[key] = core::rank::attachment{value, release};
    return HGAS_OK;
}

void *hgas_rank_data(const void *key) {
    core::rank *r = core::current();
    if (!r) return nullptr;
    auto it = r->attachments().find(key);
    return it == r->attachments().end() ? nullptr : it->second.value;
}

hgas_status_t hgas_progress(void) {
    HGASI_RANK(r);
    core::safe_point sp(*r);  // between the caller's operations: the device proxy may run
    return to_c(r->poll());
}

// --- global pointers -------------------------------------------------------------------
hgas_gptr_t hgas_gptr_null(void) { return mem::make_gptr(0, HGAS_SEG_NULL, 0); }
int hgas_gptr_is_null(hgas_gptr_t p) { return p.segment == HGAS_SEG_NULL; }
hgas_gptr_t hgas_gptr_add(hgas_gptr_t p, int64_t bytes) {
    p.offset += static_cast<uint64_t>(bytes);
    return p;
}
int hgas_where(hgas_gptr_t p) { return p.segment == HGAS_SEG_NULL ? -1 : static_cast<int>(p.rank); }

}  // extern "C"

namespace {
// hgas_ptr's resolution, shared with the _sym calls: the global pointer to `sym` on `rank`, or
// hgas_ptr's error named after `op`.
result<hgas_gptr_t> sym_gptr_slow(core::rank &r, const char *op, const void *sym, int rank) {
    if (rank < 0 || rank >= r.n())
        return fail(status::invalid_arg, "%s: rank %d does not exist (the job has %d ranks)", op, rank, r.n());
    int seg = r.own_segment_of(sym, 0);
    if (sym && seg < 0 && mem::in_program_data(sym))
        return fail(status::invalid_pointer, "%s: %p is a global or static variable, but static data is "
                    "not symmetric in this job: %s", op, sym, r.static_data_unavailable().c_str());
    if (!sym || seg < 0)
        return fail(status::invalid_pointer, "%s: %p is not in this rank's symmetric or local heap or its "
                    "static data; allocate remotely accessible memory with hgas_malloc", op, sym);
    return mem::make_gptr(rank, static_cast<uint16_t>(seg),
                          static_cast<uint64_t>(static_cast<const char *>(sym) - r.own_base(static_cast<uint16_t>(seg))));
}
// Runs f(global pointer to `sym` on `rank`), hgas_ptr's resolution: an object of the symmetric
// host heap (shmem_malloc's, the common case) inline, so that the pointer reaches the operation
// in registers (8-byte puts are bounded by such fixed costs: through memory, the reload of a
// pointer just stored field by field stalls); any other address or an error takes
// sym_gptr_slow.
template <class F>
hgas_status_t on_sym(core::rank &r, const char *op, const void *sym, int rank, F f) {
    const uint64_t off = reinterpret_cast<uintptr_t>(sym) - reinterpret_cast<uintptr_t>(r.own_base(mem::seg_symmetric));
    if (off < r.own_size(mem::seg_symmetric) && static_cast<unsigned>(rank) < static_cast<unsigned>(r.n()))
        return f(mem::make_gptr(rank, mem::seg_symmetric, off));
    auto g = sym_gptr_slow(r, op, sym, rank);
    if (!g.ok()) return to_c(g.error());
    return f(*g);
}
}  // namespace

extern "C" {

hgas_status_t hgas_ptr(const void *sym, int rank, hgas_gptr_t *out) {
    HGASI_RANK(r);
    if (!out) return to_c(fail(status::invalid_arg, "hgas_ptr: the result pointer is NULL"));
    auto g = sym_gptr_slow(*r, "hgas_ptr", sym, rank);
    if (!g.ok()) return to_c(g.error());
    *out = *g;
    return HGAS_OK;
}

void *hgas_local_addr(hgas_gptr_t p) {
    auto *r = core::current();
    if (!r) return nullptr;
    const core::peer_segment *ps = r->segment(p.rank, p.segment);
    if (!ps || p.offset >= ps->size || p.flags) return nullptr;
    if (p.offset < r->heap(p.segment).user_base()) return nullptr;  // hgas's own objects
    // sim memory is reachable through hgas calls only; cuda memory gives a device pointer.
    if (ps->kind == mem::kind::sim) return nullptr;
    if (ps->kind == mem::kind::cuda) return ps->dev ? ps->dev + p.offset : nullptr;
    // A rank can always load its own memory, whichever transport moves its RMA traffic.
    if (p.rank == static_cast<uint32_t>(r->me())) return r->own_base(p.segment) + p.offset;
    return ps->direct ? ps->direct + p.offset : nullptr;
}

// --- memory kinds ----------------------------------------------------------------------
namespace {
// HGAS_KIND_DEFAULT -> the rank's default; anything not a kind -> invalid_arg.
result<mem::kind> kind_arg(core::rank &r, const char *op, hgas_kind_t kind) {
    const int k = enum_arg(kind);
    if (k == HGAS_KIND_DEFAULT) return r.default_kind();
    if (k != HGAS_KIND_HOST && k != HGAS_KIND_CUDA && k != HGAS_KIND_SIM)
        return fail(status::invalid_arg, "%s: %d is not an hgas_kind_t (HGAS_KIND_HOST, HGAS_KIND_CUDA, HGAS_KIND_SIM)",
                    op, k);
    return static_cast<mem::kind>(k);
}
}  // namespace

int hgas_kind_available(hgas_kind_t kind) {
    auto *r = core::current();
    if (!r) return 0;
    const int k = enum_arg(kind);
    if (k == HGAS_KIND_HOST) return 1;
    if (k != HGAS_KIND_CUDA && k != HGAS_KIND_SIM) return 0;
    return r->device(static_cast<mem::kind>(k)) ? 1 : 0;
}
hgas_kind_t hgas_set_default_kind(hgas_kind_t k) {
    auto *r = core::current();
    if (!r) {
        (void)fail(status::not_initialized, "hgas_set_default_kind: call hgas_init first");
        return HGAS_KIND_DEFAULT;
    }
    auto kk = kind_arg(*r, "hgas_set_default_kind", k);
    if (!kk.ok()) return HGAS_KIND_DEFAULT;
    if (*kk != mem::kind::host && !r->device(*kk)) {
        (void)fail(status::unsupported, "hgas_set_default_kind: %s", r->kind_unavailable(*kk).c_str());
        return HGAS_KIND_DEFAULT;
    }
    const mem::kind old = r->default_kind();
    r->set_default_kind(*kk);
    return static_cast<hgas_kind_t>(old);
}
hgas_kind_t hgas_default_kind(void) {
    auto *r = core::current();
    return r ? static_cast<hgas_kind_t>(r->default_kind()) : HGAS_KIND_HOST;
}
hgas_kind_t hgas_gptr_kind(hgas_gptr_t p) {
    if (p.segment >= mem::seg_count) return HGAS_KIND_DEFAULT;
    return static_cast<hgas_kind_t>(mem::segment_kind(p.segment));
}
hgas_kind_t hgas_ptr_kind(const void *p) {
    auto *r = core::current();
    if (!r || !p) return HGAS_KIND_HOST;
    return static_cast<hgas_kind_t>(r->kind_of(p, 1));
}
const char *hgas_kind_name(hgas_kind_t kind) {
    const int k = enum_arg(kind);
    if (k != HGAS_KIND_HOST && k != HGAS_KIND_CUDA && k != HGAS_KIND_SIM) return "?";
    return mem::kind_name(static_cast<mem::kind>(k));
}

// --- memory ----------------------------------------------------------------------------
hgas_status_t hgas_malloc(size_t size, void **ptr) {
    HGASI_RANK(r);
    return to_c(coll::sym_alloc(*r, "hgas_malloc", size, 64, false, ptr, r->default_kind()));
}
hgas_status_t hgas_malloc_kind(size_t size, hgas_kind_t k, void **ptr) {
    HGASI_RANK(r);
    auto kk = kind_arg(*r, "hgas_malloc_kind", k);
    if (!kk.ok()) return to_c(kk.error());
    return to_c(coll::sym_alloc(*r, "hgas_malloc_kind", size, 64, false, ptr, *kk));
}
hgas_status_t hgas_calloc(size_t count, size_t size, void **ptr) {
    HGASI_RANK(r);
    if (size && count > SIZE_MAX / size)
        return to_c(fail(status::invalid_arg, "hgas_calloc: %zu x %zu bytes overflows", count, size));
    return to_c(coll::sym_alloc(*r, "hgas_calloc", count * size, 64, true, ptr, r->default_kind()));
}
hgas_status_t hgas_align(size_t alignment, size_t size, void **ptr) {
    HGASI_RANK(r);
    return to_c(coll::sym_alloc(*r, "hgas_align", size, alignment, false, ptr, r->default_kind()));
}
hgas_status_t hgas_free(void *ptr) {
    HGASI_RANK(r);
    return to_c(coll::sym_free(*r, ptr));
}
hgas_status_t hgas_alloc(size_t size, hgas_gptr_t *out) {
    HGASI_RANK(r);
    return to_c(coll::local_alloc(*r, size, out, r->default_kind()));
}
hgas_status_t hgas_alloc_kind(size_t size, hgas_kind_t k, hgas_gptr_t *out) {
    HGASI_RANK(r);
    auto kk = kind_arg(*r, "hgas_alloc_kind", k);
    if (!kk.ok()) return to_c(kk.error());
    return to_c(coll::local_alloc(*r, size, out, *kk));
}
hgas_status_t hgas_dealloc(hgas_gptr_t p) {
    HGASI_RANK(r);
    return to_c(coll::local_free(*r, p));
}
hgas_status_t hgas_all_alloc(uint64_t nblocks, uint64_t block_bytes, hgas_array_t *out) {
    HGASI_RANK(r);
    return to_c(coll::all_alloc(*r, nblocks, block_bytes, out, r->default_kind()));
}
hgas_status_t hgas_all_alloc_kind(uint64_t nblocks, uint64_t block_bytes, hgas_kind_t k, hgas_array_t *out) {
    HGASI_RANK(r);
    auto kk = kind_arg(*r, "hgas_all_alloc_kind", k);
    if (!kk.ok()) return to_c(kk.error());
    return to_c(coll::all_alloc(*r, nblocks, block_bytes, out, *kk));
}
hgas_status_t hgas_all_free(hgas_array_t *a) {
    HGASI_RANK(r);
    return to_c(coll::all_free(*r, a));
}
hgas_status_t hgas_array_ptr(const hgas_array_t *a, uint64_t byte_index, hgas_gptr_t *out) {
    if (!a || !out) return to_c(fail(status::invalid_arg, "hgas_array_ptr: NULL array or result pointer"));
    if (a->block_bytes == 0 || a->nranks == 0)
        return to_c(fail(status::invalid_arg, "hgas_array_ptr: the array is not allocated (freed?)"));
    const uint64_t block = byte_index / a->block_bytes, within = byte_index % a->block_bytes;
    if (block >= a->nblocks)  // not byte_index >= nblocks * block_bytes: that product may overflow
        return to_c(fail(status::out_of_bounds, "hgas_array_ptr: byte %llu is past the end of the array (%llu blocks of "
                         "%llu bytes)", (unsigned long long)byte_index, (unsigned long long)a->nblocks,
                         (unsigned long long)a->block_bytes));
    *out = mem::make_gptr(static_cast<int>(block % a->nranks), a->segment,
                          a->base + (block / a->nranks) * a->block_bytes + within);
    return HGAS_OK;
}
int hgas_array_where(const hgas_array_t *a, uint64_t block) {
    if (!a || a->nranks == 0 || block >= a->nblocks) return -1;
    return static_cast<int>(block % a->nranks);
}
void *hgas_array_local(const hgas_array_t *a) {
    auto *r = core::current();
    if (!r || !a || a->nranks == 0 || a->segment >= mem::seg_count) return nullptr;
    if (mem::segment_kind(a->segment) == mem::kind::sim) return nullptr;  // reachable through hgas calls only
    return r->own_base(a->segment) + a->base;
}

// --- RMA -------------------------------------------------------------------------------
hgas_status_t hgas_put(hgas_gptr_t dst, const void *src, size_t bytes) {
    HGASI_RANK(r);
    if (hgasi_span_.active()) rma_fields(hgasi_span_, dst, bytes);
    return to_c(rma::put(*r, dst, src, bytes, false));
}
hgas_status_t hgas_get(void *dst, hgas_gptr_t src, size_t bytes) {
    HGASI_RANK(r);
    if (hgasi_span_.active()) rma_fields(hgasi_span_, src, bytes);
    return to_c(rma::get(*r, dst, src, bytes, false));
}
hgas_status_t hgas_put_nbi(hgas_gptr_t dst, const void *src, size_t bytes) {
    HGASI_RANK(r);
    if (hgasi_span_.active()) rma_fields(hgasi_span_, dst, bytes);
    return to_c(rma::put(*r, dst, src, bytes, true));
}
hgas_status_t hgas_get_nbi(void *dst, hgas_gptr_t src, size_t bytes) {
    HGASI_RANK(r);
    if (hgasi_span_.active()) rma_fields(hgasi_span_, src, bytes);
    return to_c(rma::get(*r, dst, src, bytes, true));
}
// hgas_ptr + the operation in one call (the OpenSHMEM front end's shmem_putmem, shmem_p, ...):
// one API entry and one address resolution instead of two of each.
hgas_status_t hgas_put_sym(void *dst, const void *src, size_t bytes, int rank) {
    HGASI_RANK(r);
    return on_sym(*r, "hgas_put_sym", dst, rank, [&](hgas_gptr_t g) {
        if (hgasi_span_.active()) rma_fields(hgasi_span_, g, bytes);
        return to_c(rma::put(*r, g, src, bytes, false));
    });
}
hgas_status_t hgas_get_sym(void *dst, const void *src, size_t bytes, int rank) {
    HGASI_RANK(r);
    return on_sym(*r, "hgas_get_sym", src, rank, [&](hgas_gptr_t g) {
        if (hgasi_span_.active()) rma_fields(hgasi_span_, g, bytes);
        return to_c(rma::get(*r, dst, g, bytes, false));
    });
}
hgas_status_t hgas_put_sym_nbi(void *dst, const void *src, size_t bytes, int rank) {
    HGASI_RANK(r);
    return on_sym(*r, "hgas_put_sym_nbi", dst, rank, [&](hgas_gptr_t g) {
        if (hgasi_span_.active()) rma_fields(hgasi_span_, g, bytes);
        return to_c(rma::put(*r, g, src, bytes, true));
    });
}
hgas_status_t hgas_get_sym_nbi(void *dst, const void *src, size_t bytes, int rank) {
    HGASI_RANK(r);
    return on_sym(*r, "hgas_get_sym_nbi", src, rank, [&](hgas_gptr_t g) {
        if (hgasi_span_.active()) rma_fields(hgasi_span_, g, bytes);
        return to_c(rma::get(*r, dst, g, bytes, true));
    });
}
hgas_status_t hgas_put_nb(hgas_gptr_t dst, const void *src, size_t bytes, hgas_handle_t *h) {
    HGASI_RANK(r);
    if (hgasi_span_.active()) rma_fields(hgasi_span_, dst, bytes);
    return to_c(rma::put_nb(*r, dst, src, bytes, h));
}
hgas_status_t hgas_get_nb(void *dst, hgas_gptr_t src, size_t bytes, hgas_handle_t *h) {
    HGASI_RANK(r);
    if (hgasi_span_.active()) rma_fields(hgasi_span_, src, bytes);
    return to_c(rma::get_nb(*r, dst, src, bytes, h));
}
hgas_status_t hgas_wait(hgas_handle_t h) {
    HGASI_RANK(r);
    return to_c(rma::wait(*r, h));
}
hgas_status_t hgas_test(hgas_handle_t h, int *done) {
    HGASI_RANK(r);
    return to_c(rma::test(*r, h, done));
}
hgas_status_t hgas_fence(void) {
    HGASI_RANK(r);
    return to_c(rma::fence(*r));
}
hgas_status_t hgas_register(void *ptr, size_t bytes) {
    HGASI_RANK(r);
    return to_c(r->register_user(ptr, bytes));
}
hgas_status_t hgas_deregister(void *ptr) {
    HGASI_RANK(r);
    return to_c(r->deregister_user(ptr));
}
int hgasi_peer_attached(int peer) {
    auto *r = core::current();
    if (!r || peer < 0 || peer >= r->n()) return -1;
    return r->peer_attached(peer) ? 1 : 0;
}
hgas_status_t hgasi_reg_cache_query(const void *ptr, size_t bytes, hgasi_reg_info_t *out) {
    HGASI_RANK(r);
    if (!out) return to_c(fail(status::invalid_arg, "hgasi_reg_cache_query: out is NULL"));
    *out = hgasi_reg_info_t{};
    gpu::reg_cache &c = r->registrations();
    c.apply_unmaps();
    gpu::reg_cache::entry e;
    if (ptr && c.overlaps(ptr, bytes, &e)) {
        out->found = 1;
        out->cached = e.cached;
        out->pinned = e.pinned;
        out->base = reinterpret_cast<void *>(e.base);
        out->size = e.size;
    }
    const gpu::reg_policy &p = r->reg_policy();
    out->active = p.active();
    out->entries = c.count();
    out->cached_bytes = c.cached_bytes();
    out->explicit_bytes = c.explicit_bytes();
    const auto &n = p.stats();
    out->hits = n.hits;
    out->added = n.added;
    out->merged = n.merged;
    out->evicted = n.evicted;
    out->invalidated = n.invalidated;
    out->skipped = n.skipped;
    return HGAS_OK;
}
hgas_status_t hgas_quiet(void) {
    HGASI_RANK(r);
    return to_c(rma::quiet(*r));
}
hgas_status_t hgas_put_signal(hgas_gptr_t dst, const void *src, size_t bytes, hgas_gptr_t sig, uint64_t value,
                              hgas_signal_op_t op) {
    HGASI_RANK(r);
    if (hgasi_span_.active()) {
        rma_fields(hgasi_span_, dst, bytes);
        hgasi_span_.args().value = value;
        hgasi_span_.args().has_value = true;
        // SET only: the arrow ends at the wait that sees this value (docs/trace.md)
        if (op == HGAS_SIGNAL_SET) hgasi_span_.args().flow_out = trace::signal_flow(sig.rank, sig.segment, sig.offset, value);
    }
    return to_c(rma::put_signal(*r, dst, src, bytes, sig, value, op, false));
}
hgas_status_t hgas_put_signal_nbi(hgas_gptr_t dst, const void *src, size_t bytes, hgas_gptr_t sig, uint64_t value,
                                  hgas_signal_op_t op) {
    HGASI_RANK(r);
    if (hgasi_span_.active()) {
        rma_fields(hgasi_span_, dst, bytes);
        hgasi_span_.args().value = value;
        hgasi_span_.args().has_value = true;
        // SET only: the arrow ends at the wait that sees this value (docs/trace.md)
        if (op == HGAS_SIGNAL_SET) hgasi_span_.args().flow_out = trace::signal_flow(sig.rank, sig.segment, sig.offset, value);
    }
    return to_c(rma::put_signal(*r, dst, src, bytes, sig, value, op, true));
}
hgas_status_t hgas_signal_wait_until(const uint64_t *sig, hgas_cmp_t cmp, uint64_t value, uint64_t *observed) {
    HGASI_RANK(r);
    if (!hgasi_span_.active()) return to_c(sync::signal_wait_until(*r, sig, enum_arg(cmp), value, observed));
    uint64_t seen = 0;
    status st = sync::signal_wait_until(*r, sig, enum_arg(cmp), value, &seen);
    if (st == status::ok) {
        if (observed) *observed = seen;
        int seg = r->own_segment_of(sig, 0);
        if (seg >= 0)
            hgasi_span_.args().flow_in = trace::signal_flow(
                static_cast<uint32_t>(r->me()), static_cast<uint16_t>(seg),
                static_cast<uint64_t>(reinterpret_cast<const char *>(sig) - r->own_base(seg)), seen);
        hgasi_span_.args().value = seen;
        hgasi_span_.args().has_value = true;
    }
    return to_c(st);
}
hgas_status_t hgas_signal_test(const uint64_t *sig, hgas_cmp_t cmp, uint64_t value, int *satisfied) {
    HGASI_RANK(r);
    return to_c(sync::signal_test(*r, sig, enum_arg(cmp), value, satisfied));
}
hgas_status_t hgas_signal_fetch(const uint64_t *sig, uint64_t *value) {
    HGASI_RANK(r);
    return to_c(sync::signal_fetch(*r, sig, value));
}
hgas_status_t hgas_atomic(hgas_gptr_t target, hgas_amo_t op, hgas_dtype_t type, const void *operand,
                          const void *compare, void *result) {
    HGASI_RANK(r);
    return to_c(rma::atomic(*r, target, op, type, operand, compare, result));
}
hgas_status_t hgas_atomic_sym(void *target, int rank, hgas_amo_t op, hgas_dtype_t type, const void *operand,
                              const void *compare, void *result) {
    HGASI_RANK(r);
    return on_sym(*r, "hgas_atomic_sym", target, rank, [&](hgas_gptr_t g) {
        return to_c(rma::atomic(*r, g, op, type, operand, compare, result));
    });
}

// --- synchronization and collectives -------------------------------------------------------
hgas_status_t hgas_barrier(void) {
    HGASI_RANK(r);
    return to_c(sync::barrier(*r));
}
hgas_status_t hgas_broadcast(void *dst, const void *src, size_t bytes, int root) {
    HGASI_RANK(r);
    return to_c(coll::broadcast(*r, dst, src, bytes, root));
}
hgas_status_t hgas_reduce(void *dst, const void *src, size_t count, hgas_dtype_t type, hgas_op_t op, int root) {
    HGASI_RANK(r);
    return to_c(coll::reduce(*r, dst, src, count, type, op, root));
}
hgas_status_t hgas_allreduce(void *dst, const void *src, size_t count, hgas_dtype_t type, hgas_op_t op) {
    HGASI_RANK(r);
    return to_c(coll::allreduce(*r, dst, src, count, type, op));
}
hgas_status_t hgas_fcollect(void *dst, const void *src, size_t bytes) {
    HGASI_RANK(r);
    return to_c(coll::fcollect(*r, dst, src, bytes));
}
hgas_status_t hgas_alltoall(void *dst, const void *src, size_t bytes) {
    HGASI_RANK(r);
    return to_c(coll::alltoall(*r, dst, src, bytes));
}

}  // extern "C"
