#include "gpu/sharing.hpp"

namespace hgas::gpu {

bool time_sliced(const gpu_share &s) {
    const int per = s.ranks_per_process > 0 ? s.ranks_per_process : 1;
    const int processes = (s.local_ranks + per - 1) / per;
    return !s.mps && s.gpus > 0 && processes > s.gpus;
}

}  // namespace hgas::gpu
