#include "energy.hpp"

#include <dlfcn.h>

#include <cmath>

namespace himeno {

// NVML's C API (nvml.h) as far as used here; the types are opaque pointers and ints there too.
gpu_energy::gpu_energy(int index) {
    lib_ = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib_) {
        why_ = "no NVML";
        return;
    }
    auto init = reinterpret_cast<int (*)()>(dlsym(lib_, "nvmlInit_v2"));
    auto count = reinterpret_cast<int (*)(unsigned *)>(dlsym(lib_, "nvmlDeviceGetCount_v2"));
    auto handle = reinterpret_cast<int (*)(unsigned, void **)>(dlsym(lib_, "nvmlDeviceGetHandleByIndex_v2"));
    get_energy_ = reinterpret_cast<int (*)(void *, unsigned long long *)>(
        dlsym(lib_, "nvmlDeviceGetTotalEnergyConsumption"));
    shutdown_ = reinterpret_cast<int (*)()>(dlsym(lib_, "nvmlShutdown"));
    if (!init || !count || !handle || !get_energy_ || !shutdown_) {
        why_ = "NVML lacks nvmlDeviceGetTotalEnergyConsumption";
        return;
    }
    if (int rc = init(); rc != 0) {
        why_ = "nvmlInit failed (NVML error " + std::to_string(rc) + ")";
        shutdown_ = nullptr;
        return;
    }
    unsigned n = 0;
    if (count(&n) != 0 || n == 0) {
        why_ = "NVML sees no GPU";
        return;
    }
    if (unsigned(index) >= n) {  // another rank of this node counts the GPUs
        no_gpu_ = true;
        why_ = "no GPU for this local rank";
        return;
    }
    unsigned long long mj = 0;
    if (handle(unsigned(index), &dev_) != 0 || get_energy_(dev_, &mj) != 0) {
        why_ = "GPU " + std::to_string(index) + " has no energy counter";
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
