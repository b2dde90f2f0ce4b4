// GPU energy from NVML, loaded at run time so that himeno builds and runs without it.
#pragma once

#include <string>

namespace himeno {

class gpu_energy {
public:
    /// Opens libnvidia-ml.so.1 and the GPU with NVML index `index` (mode cpu: the rank's local
    /// rank; NVML's index ignores CUDA_VISIBLE_DEVICES).
    explicit gpu_energy(int index);
    /// The GPU with this PCI bus id ("0000:19:00.0", from cudaDeviceGetPCIBusId: the rank's CUDA
    /// device, whatever CUDA_VISIBLE_DEVICES says). `counts` is false for a rank whose GPU
    /// another rank of the node counts (ranks sharing a GPU): it reads nothing and adds 0.
    gpu_energy(const std::string &pci_bus_id, bool counts);
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
    bool open_nvml();  // false (why_ set) when NVML cannot be used

    void *lib_ = nullptr, *dev_ = nullptr;
    int (*get_energy_)(void *, unsigned long long *) = nullptr;
    int (*shutdown_)() = nullptr;
    unsigned count_ = 0;  // GPUs NVML sees
    bool ok_ = false, no_gpu_ = false;
    std::string why_;
};

}  // namespace himeno
