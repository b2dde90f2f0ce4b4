// Backends host and sim (device.hpp), the CPU interaction kernels, pinned host memory.
#include <hgas/hgas.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "device.hpp"

namespace episim {

void check(int status, const std::string &what) {
    if (status != HGAS_OK) throw error(what + ": " + hgas_last_error());
}

Device::~Device() {
    for (auto &p : pins_) {
        hgas_deregister(p.first);
        std::free(p.first);
    }
}

void *Device::pinned(size_t bytes) {
    bytes = (std::max<size_t>(bytes, 1) + 4095) / 4096 * 4096;  // whole pages: no page shared
    void *p = nullptr;
    if (posix_memalign(&p, 4096, bytes) != 0) throw error("out of host memory for pinned buffers");
    check(hgas_register(p, bytes), "registering a pinned staging buffer");
    pins_.emplace_back(p, bytes);
    pinned_ += bytes;
    pinned_peak_ = std::max(pinned_peak_, pinned_);
    return p;
}

void Device::unpin(void *p) {
    for (auto it = pins_.begin(); it != pins_.end(); ++it)
        if (it->first == p) {
            hgas_deregister(p);
            std::free(p);
            pinned_ -= it->second;
            pins_.erase(it);
            return;
        }
}

namespace {
bool by_room(const Visit &a, const Visit &b) { return visit_less(a, b); }
}  // namespace

void sort_run_cpu(Visit *v, uint64_t lo, uint64_t hi) { std::sort(v + lo, v + hi, by_room); }
void merge_runs_cpu(Visit *v, uint64_t lo, uint64_t mid, uint64_t hi) {
    std::inplace_merge(v + lo, v + mid, v + hi, by_room);
}

uint64_t interactions_cpu(Visit *v, uint64_t n, Infection *out, const Params &p, uint32_t day,
                          const std::vector<uint64_t> &person_begin, std::vector<uint64_t> &first, bool sorted) {
    if (!sorted) std::sort(v, v + n, by_room);
    uint64_t m = 0, room = 0;
    for (uint64_t j = 0; j < n; ++j) {
        if (j == 0 || !same_room(v[j], v[j - 1])) room = j;
        if (v[j].state == S && infect_visit(p, day, v, n, room, j, &out[m])) ++m;
    }
    std::sort(out, out + m, [](const Infection &a, const Infection &b) { return infection_less(a, b); });
    first.resize(person_begin.size());
    for (size_t r = 0; r < person_begin.size(); ++r)
        first[r] = uint64_t(std::lower_bound(out, out + m, person_begin[r],
                                             [](const Infection &a, uint64_t x) { return a.person < x; }) -
                            out);
    return m;
}

namespace {

class HostDevice final : public Device {
public:
    kind which() const override { return kind::host; }
    void *alloc(size_t bytes) override {
        void *p = std::malloc(std::max<size_t>(bytes, 64));
        if (!p) throw error("out of host memory for the location arrays");
        return p;
    }
    void release(void *p) override { std::free(p); }
    void h2d(void *d, const void *h, size_t n, int) override { std::memcpy(d, h, n); }
    void d2h(void *h, const void *d, size_t n, int) override { std::memcpy(h, d, n); }
    void d2d(void *d, const void *s, size_t n, int) override { std::memcpy(d, s, n); }
    uint64_t record(int) override { return 0; }
    bool done(uint64_t) override { return true; }
    void sync() override {}
    uint64_t interactions(void *v, uint64_t n, void *out, const Params &p, uint32_t day,
                          const std::vector<uint64_t> &pb, std::vector<uint64_t> &first, bool sorted) override {
        return interactions_cpu(static_cast<Visit *>(v), n, static_cast<Infection *>(out), p, day, pb, first, sorted);
    }
    uint64_t sort_run(void *v, uint64_t lo, uint64_t hi, const void *frag, int) override {
        if (frag != static_cast<Visit *>(v) + lo)  // in place (pipelined): copied already
            std::memcpy(static_cast<Visit *>(v) + lo, frag, (hi - lo) * sizeof(Visit));
        sort_run_cpu(static_cast<Visit *>(v), lo, hi);
        return 0;
    }
    void merge_runs(void *v, uint64_t lo, uint64_t mid, uint64_t hi, int) override {
        merge_runs_cpu(static_cast<Visit *>(v), lo, mid, hi);
    }
};

// Sim memory is symmetric (hgas_malloc_kind) and named by addresses that only hgas calls take:
// copies are hgas_put / hgas_get to this rank's own global pointers.
class SimDevice final : public Device {
public:
    kind which() const override { return kind::sim; }
    void *alloc(size_t bytes) override {
        void *p = nullptr;
        check(hgas_malloc_kind(std::max<size_t>(bytes, 64), HGAS_KIND_SIM, &p),
              "allocating " + std::to_string(bytes) + " bytes of sim memory (raise HGAS_SIM_HEAP_SIZE)");
        return p;
    }
    void release(void *p) override { hgas_free(p); }
    void h2d(void *d, const void *h, size_t n, int) override {
        if (n) check(hgas_put(me(d), h, n), "copy to sim memory");
    }
    void d2h(void *h, const void *d, size_t n, int) override {
        if (n) check(hgas_get(h, me(d), n), "copy from sim memory");
    }
    void d2d(void *d, const void *s, size_t n, int) override {
        if (n) check(hgas_put(me(d), s, n), "copy within sim memory");
    }
    uint64_t record(int) override { return 0; }
    bool done(uint64_t) override { return true; }
    void sync() override {}
    // The "kernels" run on the CPU on a working copy: visits in, infections out, through the
    // copy engine. The pipelined sort keeps its runs in the working copy (a kernel's view of
    // the device memory it sorts), each fragment's visits brought in once as they arrive;
    // interactions then finds them there, sorted.
    uint64_t interactions(void *v, uint64_t n, void *out, const Params &p, uint32_t day,
                          const std::vector<uint64_t> &pb, std::vector<uint64_t> &first, bool sorted) override {
        visits_.resize(n);
        inf_.resize(n);
        if (!sorted) d2h(visits_.data(), v, n * sizeof(Visit), 0);
        const uint64_t m = interactions_cpu(visits_.data(), n, inf_.data(), p, day, pb, first, sorted);
        h2d(v, visits_.data(), n * sizeof(Visit), 0);  // sorted, as a device sort leaves them
        h2d(out, inf_.data(), m * sizeof(Infection), 0);
        return m;
    }

    // The fragment comes into the working copy straight from its receive buffer (one copy;
    // the sorted array reaches v when interactions writes it back).
    uint64_t sort_run(void *, uint64_t lo, uint64_t hi, const void *frag, int) override {
        if (visits_.size() < hi) visits_.resize(hi);
        d2h(visits_.data() + lo, frag, (hi - lo) * sizeof(Visit), 0);
        sort_run_cpu(visits_.data(), lo, hi);
        return 0;
    }
    void merge_runs(void *, uint64_t lo, uint64_t mid, uint64_t hi, int) override {
        merge_runs_cpu(visits_.data(), lo, mid, hi);
    }

private:
    static hgas_gptr_t me(const void *p) {
        hgas_gptr_t g;
        check(hgas_ptr(p, hgas_rank_me(), &g), "global pointer to sim memory");
        return g;
    }
    std::vector<Visit> visits_;
    std::vector<Infection> inf_;
};

}  // namespace

std::unique_ptr<Device> make_device(kind k, std::string *why) {
    switch (k) {
    case kind::host: return std::make_unique<HostDevice>();
    case kind::sim:
        if (!hgas_kind_available(HGAS_KIND_SIM)) {
            *why = "kind sim needs sim memory: set HGAS_SIM_HEAP_SIZE (e.g. HGAS_SIM_HEAP_SIZE=64M)";
            return nullptr;
        }
        return std::make_unique<SimDevice>();
    case kind::cuda: return make_cuda_device(why);
    }
    return nullptr;
}

}  // namespace episim
