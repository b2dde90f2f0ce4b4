// How the node's rank processes share its GPUs, as far as the device layer's choices go.
#pragma once

namespace hgas::gpu {

struct gpu_share {
    int local_ranks = 1;        // ranks on this node
    int ranks_per_process = 1;  // ranks as threads of one process share its CUDA context
    int gpus = 1;               // GPUs this process sees
    bool mps = false;           // an MPS daemon serves the processes (HGAS_GPU_SHARING=mps, or
                                // CUDA_MPS_PIPE_DIRECTORY names one)
};

// Whether the GPU time-slices between processes: more rank processes on the node than GPUs,
// without MPS. Then a kernel that keeps running (the copy agent, which waits up to
// HGAS_GPU_AGENT_IDLE_US for work) holds the GPU for its process's whole time slice, and every
// other process's kernels and copies wait for the switch: on an H100, two processes' 8-byte
// allreduce of GPU memory took 4.7 ms with agents serving copies and 0.46 ms without. The
// cuda device's agent serves atomics only there.
bool time_sliced(const gpu_share &s);

}  // namespace hgas::gpu
