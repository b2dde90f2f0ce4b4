#include "energy.hpp"

#include <dlfcn.h>

#include <cmath>

namespace himeno {

// NVML's C API (nvml.h) as far as used here; the types are opaque pointers and ints there too.
bool gpu_energy::open_nvml() {
    lib_ = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib_) {
        why_ = "no NVML";
        return false;
    }
    auto init = reinterpret_cast<int (*)()>(dlsym(lib_, "nvmlInit_v2"));
    auto count = reinterpret_cast<int (*)(unsigned *)>(dlsym(lib_, "nvmlDeviceGetCount_v2"));
    get_energy_ = reinterpret_cast<int (*)(void *, unsigned long long *)>(
        dlsym(lib_, "nvmlDeviceGetTotalEnergyConsumption"));
    shutdown_ = reinterpret_cast<int (*)()>(dlsym(lib_, "nvmlShutdown"));
    if (!init || !count || !get_energy_ || !shutdown_) {
        why_ = "NVML lacks nvmlDeviceGetTotalEnergyConsumption";
        shutdown_ = nullptr;
        return false;
    }
    if (int rc = init(); rc != 0) {
        why_ = "nvmlInit failed (NVML error " + std::to_string(rc) + ")";
        shutdown_ = nullptr;
        return false;
    }
    if (count(&count_) != 0 || count_ == 0) {
        why_ = "NVML sees no GPU";
        return false;
    }
    return true;
}

gpu_energy::gpu_energy(int index) {
    if (!open_nvml()) return;
    if (unsigned(index) >= count_) {  // another rank of this node counts the GPUs
        no_gpu_ = true;
        why_ = "no GPU for this local rank";
        return;
    }
    auto handle = reinterpret_cast<int (*)(unsigned, void **)>(dlsym(lib_, "nvmlDeviceGetHandleByIndex_v2"));
    unsigned long long mj = 0;
    if (!handle || handle(unsigned(index), &dev_) != 0 || get_energy_(dev_, &mj) != 0) {
        why_ = "GPU " + std::to_string(index) + " has no energy counter";
        return;
    }
    ok_ = true;
}

gpu_energy::gpu_energy(const std::string &pci_bus_id, bool counts) {
    if (!open_nvml()) return;
    if (!counts) {
        no_gpu_ = true;
        why_ = "its GPU is counted by another rank";
        return;
    }
    // nvmlDeviceGetHandleByPciBusId_v2 takes "domain:bus:device.function" in hex, as CUDA writes it.
    auto handle = reinterpret_cast<int (*)(const char *, void **)>(dlsym(lib_, "nvmlDeviceGetHandleByPciBusId_v2"));
    if (!handle) {
        why_ = "NVML lacks nvmlDeviceGetHandleByPciBusId_v2";
        return;
    }
    if (int rc = handle(pci_bus_id.c_str(), &dev_); rc != 0) {
        why_ = "NVML does not know the GPU at " + pci_bus_id + " (NVML error " + std::to_string(rc) + ")";
        return;
    }
    unsigned long long mj = 0;
    if (get_energy_(dev_, &mj) != 0) {
        why_ = "the GPU at " + pci_bus_id + " has no energy counter";
        return;
    }
    ok_ = true;
}

gpu_energy::~gpu_energy() {
    if (shutdown_) shutdown_();
    if (lib_) dlclose(lib_);
}

double gpu_energy::read_joules() {
    unsigned long long mj = 0;
    if (!ok_ || get_energy_(dev_, &mj) != 0) return std::nan("");
    return double(mj) * 1e-3;
}

}  // namespace himeno
