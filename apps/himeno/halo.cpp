#include "halo.hpp"

#include <unistd.h>

#include <string>

#include "common.hpp"

namespace himeno {

halo::halo(kind k, size_t plane_floats, int me) : kind_(k), floats_(plane_floats), me_(me) {
    const size_t bytes = 4 * plane_floats * sizeof(float);
    if (k == kind::host) {
        check(hgas_malloc(bytes, reinterpret_cast<void **>(&recv_)), "hgas_malloc (halo buffers)");
    } else {
        check(hgas_malloc_kind(bytes, k == kind::sim ? HGAS_KIND_SIM : HGAS_KIND_CUDA, reinterpret_cast<void **>(&recv_)),
              "hgas_malloc_kind (halo buffers)");
        staging_.resize(plane_floats);  // device memory: a CPU reader fetches it with hgas_get
    }
    check(hgas_calloc(16, sizeof(uint64_t), reinterpret_cast<void **>(&sig_)), "hgas_calloc (signals)");
}

halo::~halo() {
    hgas_free(sig_);
    hgas_free(recv_);
}

void halo::send(int to, int side, int it, const float *plane) {
    hgas_gptr_t dst, sig;
    check(hgas_ptr(slot(side, it), to, &dst), "hgas_ptr");
    check(hgas_ptr(&sig_[8 * side], to, &sig), "hgas_ptr");
    check(hgas_put_signal_nbi(dst, plane, floats_ * sizeof(float), sig, uint64_t(it) + 1, HGAS_SIGNAL_SET),
          "hgas_put_signal_nbi (halo)");
}

const float *halo::receive(int side, int it) {
    check(hgas_signal_wait_until(&sig_[8 * side], HGAS_CMP_GE, uint64_t(it) + 1, nullptr), "halo wait");
    if (kind_ == kind::host) return slot(side, it);
    hgas_gptr_t src;
    check(hgas_ptr(slot(side, it), me_, &src), "hgas_ptr");
    check(hgas_get(staging_.data(), src, floats_ * sizeof(float)), "hgas_get (halo)");
    return staging_.data();
}

void halo::wait(int side, int it, int poll_us) {
    const double deadline = now() + wait_timeout_s();
    for (;;) {
        int ok = 0;  // hgas_signal_test also makes progress (staged transfers need it)
        check(hgas_signal_test(&sig_[8 * side], HGAS_CMP_GE, uint64_t(it) + 1, &ok), "hgas_signal_test (halo)");
        if (ok) return;
        if (now() > deadline)
            die("himeno: rank " + std::to_string(me_) + ": the halo of sweep " + std::to_string(it) + " from rank " +
                std::to_string(side == 0 ? me_ - 1 : me_ + 1) + " did not arrive within " +
                std::to_string(wait_timeout_s()) + " s (HGAS_TIMEOUT)");
        if (poll_us > 0) usleep(poll_us);
    }
}

}  // namespace himeno
