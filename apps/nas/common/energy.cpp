#include "energy.hpp"

#include <dlfcn.h>
#include <hgas/hgas.h>

#include <cmath>

#include "util.hpp"

namespace nas {

gpu_energy::gpu_energy(const std::string &pci_bus_id, int index, bool counts) {
    if (!counts) {
        elsewhere_ = true;
        why_ = "its GPU is counted by another rank";
        return;
    }
    lib_ = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib_) {
        why_ = "no NVML (libnvidia-ml.so.1)";
        return;
    }
    auto init = reinterpret_cast<int (*)()>(dlsym(lib_, "nvmlInit_v2"));
    auto by_index = reinterpret_cast<int (*)(unsigned, void **)>(dlsym(lib_, "nvmlDeviceGetHandleByIndex_v2"));
    auto by_pci = reinterpret_cast<int (*)(const char *, void **)>(dlsym(lib_, "nvmlDeviceGetHandleByPciBusId_v2"));
    get_energy_ = reinterpret_cast<int (*)(void *, unsigned long long *)>(
        dlsym(lib_, "nvmlDeviceGetTotalEnergyConsumption"));
    auto shutdown = reinterpret_cast<int (*)()>(dlsym(lib_, "nvmlShutdown"));
    if (!init || !by_index || !by_pci || !get_energy_ || !shutdown) {
        why_ = "NVML lacks the energy counter functions";
        return;
    }
    if (int rc = init(); rc != 0) {
        why_ = "nvmlInit failed (NVML error " + std::to_string(rc) + ")";
        return;
    }
    shutdown_ = shutdown;
    const int rc = pci_bus_id.empty() ? by_index(unsigned(index), &dev_) : by_pci(pci_bus_id.c_str(), &dev_);
    if (rc != 0) {
        why_ = "NVML has no GPU " + (pci_bus_id.empty() ? std::to_string(index) : pci_bus_id) + " (NVML error " +
               std::to_string(rc) + ")";
        return;
    }
    unsigned long long mj = 0;
    if (get_energy_(dev_, &mj) != 0) {
        why_ = "the GPU has no energy counter";
        return;
    }
    ok_ = true;
}

gpu_energy::~gpu_energy() {
    if (shutdown_) shutdown_();
    if (lib_) dlclose(lib_);
}

double gpu_energy::read_joules() {
    if (elsewhere_) return 0.0;
    unsigned long long mj = 0;
    if (!ok_ || get_energy_(dev_, &mj) != 0) return std::nan("");
    return double(mj) * 1e-3;
}

double sum_energy(gpu_energy &e, double j0, double j1, std::string *note) {
    double v[2] = {e.available() || e.counted_elsewhere() ? 1.0 : 0.0, e.available() ? j1 - j0 : 0.0};
    double ok = v[0], total = v[1];
    check(hgas_allreduce(&ok, &v[0], 1, HGAS_DOUBLE, HGAS_OP_MIN), "hgas_allreduce");
    check(hgas_allreduce(&total, &v[1], 1, HGAS_DOUBLE, HGAS_OP_SUM), "hgas_allreduce");
    if (ok < 1) {
        *note = e.available() || e.counted_elsewhere() ? "unavailable on some rank" : "unavailable: " + e.why();
        return std::nan("");
    }
    if (!(total > 0)) {
        *note = "unavailable (the NVML energy counter did not advance during the run: run longer)";
        return std::nan("");
    }
    *note = "NVML total energy counter, summed over the GPUs of the ranks";
    return total;
}

}  // namespace nas
