#include "gpu_check.hpp"

#include <hgas/hgas.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "common.hpp"
#include "progress_wait.hpp"

namespace himeno::gpu {

void cuda_fail(cudaError_t e, const char *call, const char *file, int line) {
    char msg[1024];
    std::snprintf(msg, sizeof msg, "himeno: rank %d: CUDA error %s (%s) from %s at %s:%d", hgas_rank_me(),
                  cudaGetErrorName(e), cudaGetErrorString(e), call, file, line);
    std::string m = msg;
    if (e == cudaErrorNoKernelImageForDevice || e == cudaErrorUnsupportedPtxVersion ||
        e == cudaErrorInvalidDeviceFunction)
        m += "; this himeno has no code for this GPU: configure with -DCMAKE_CUDA_ARCHITECTURES=<its compute "
             "capability, e.g. 90> and rebuild";
    die(m);
}

void check_launch(const char *kernel, const char *file, int line) {
    const cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) cuda_fail(e, (std::string("the launch of ") + kernel).c_str(), file, line);
}

void wait_event(cudaEvent_t e, const char *what, int poll_us) {
    const double timeout = wait_timeout_s(), deadline = now() + timeout;
    for (;;) {
        const cudaError_t q = cudaEventQuery(e);
        if (q == cudaSuccess) return;
        if (q != cudaErrorNotReady) cuda_fail(q, (std::string("cudaEventQuery (") + what + ")").c_str(), __FILE__, __LINE__);
        if (now() > deadline)
            die("himeno: rank " + std::to_string(hgas_rank_me()) + ": the GPU did not finish " + what + " within " +
                std::to_string(timeout) + " s (HGAS_TIMEOUT)");
        check(hgas_progress(), "hgas_progress");
        if (poll_us > 0) usleep(poll_us);
    }
}

void wait_event_progress(cudaEvent_t e, const volatile unsigned long long *done, long long total, const char *what,
                         int poll_us) {
    const double timeout = wait_timeout_s();
    double deadline = now() + timeout;
    unsigned long long seen = 0;
    progress_pacer pace{total, poll_us};
    for (;;) {
        const cudaError_t q = cudaEventQuery(e);
        if (q == cudaSuccess) return;
        if (q != cudaErrorNotReady)
            cuda_fail(q, (std::string("cudaEventQuery (") + what + ")").c_str(), __FILE__, __LINE__);
        const double t = now();
        const unsigned long long d = *done;
        if (d != seen) seen = d, deadline = t + timeout;
        if (t > deadline)
            die("himeno: rank " + std::to_string(hgas_rank_me()) + ": the GPU finished no sweep of " + what + " for " +
                std::to_string(timeout) + " s (HGAS_TIMEOUT; " + std::to_string(seen) + " of " + std::to_string(total) +
                " done)");
        check(hgas_progress(), "hgas_progress");
        const long long s = pace.sleep_us(t, static_cast<long long>(d));
        if (s > 0) usleep(static_cast<useconds_t>(s));
    }
}

}  // namespace himeno::gpu
