// GPU energy from NVML, loaded at run time so that himeno builds and runs without it.
#pragma once

#include <string>

namespace himeno {

class gpu_energy {
public:
    /// Opens libnvidia-ml.so.1 and the GPU with NVML index `index` (the rank's local rank).
    explicit gpu_energy(int index);
    ~gpu_energy();
    gpu_energy(const gpu_energy &) = delete;
    gpu_energy &operator=(const gpu_energy &) = delete;

    /// False when there is no NVML, no such GPU or no energy counter; why() says which.
    bool available() const { return ok_; }
    /// True when NVML works but this rank has no GPU of its own to count (more ranks than GPUs).
    bool no_gpu_here() const { return no_gpu_; }
    const std::string &why() const { return why_; }
    /// Total energy the GPU has used since the driver loaded, in joules (NaN if unavailable).
    double read_joules();

private:
    void *lib_ = nullptr, *dev_ = nullptr;
    int (*get_energy_)(void *, unsigned long long *) = nullptr;
    int (*shutdown_)() = nullptr;
    bool ok_ = false, no_gpu_ = false;
    std::string why_;
};

}  // namespace himeno
