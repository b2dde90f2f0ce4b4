// CUDA error checks and waits of the GPU modes. Every runtime call goes through HIMENO_CK and
// every launch is followed by HIMENO_CK_LAUNCH; a failure ends the whole job (hgas_abort) with
// the call, the place and what to do, so that no rank is left waiting for it.
#pragma once

#include <cuda_runtime.h>

namespace himeno::gpu {

[[noreturn]] void cuda_fail(cudaError_t e, const char *call, const char *file, int line);
/// cudaGetLastError after launching `kernel`: a bad configuration is reported at once; faults
/// inside the kernel surface at the next event query (wait_event).
void check_launch(const char *kernel, const char *file, int line);

#define HIMENO_CK(call)                                                                      \
    do {                                                                                     \
        const cudaError_t himeno_e_ = (call);                                                \
        if (himeno_e_ != cudaSuccess) ::himeno::gpu::cuda_fail(himeno_e_, #call, __FILE__, __LINE__); \
    } while (0)
#define HIMENO_CK_LAUNCH(kernel) ::himeno::gpu::check_launch(#kernel, __FILE__, __LINE__)

/// Waits until event `e` has completed: queries it, sleeps `poll_us` between queries (0: spins)
/// and makes hgas progress meanwhile (transfers staged to this rank need it). Ends the job on
/// a CUDA error, or after HGAS_TIMEOUT naming `what`.
void wait_event(cudaEvent_t e, const char *what, int poll_us);

/// wait_event for a run of `total` sweeps whose kernel counts the sweeps it has finished in
/// `*done` (host memory the GPU writes): sleeps progress_sleep_us between queries, and the
/// HGAS_TIMEOUT counts from the last sweep that finished, so a long run is not cut short and a
/// stuck one is still named.
void wait_event_progress(cudaEvent_t e, const volatile unsigned long long *done, long long total, const char *what,
                         int poll_us);

}  // namespace himeno::gpu
