// GPU energy from NVML's total-energy counter, loaded at run time (dlopen) so that the NAS
// programs build and run where there is no NVML.
#pragma once

#include <string>

namespace nas {

class gpu_energy {
public:
    /// The GPU at this PCI bus id ("0000:19:00.0", as cudaDeviceGetPCIBusId writes it), or,
    /// with an empty id, the GPU with NVML index `index`. `counts` false: another rank of the
    /// node counts this GPU (ranks sharing one); this rank reads nothing and adds 0.
    gpu_energy(const std::string &pci_bus_id, int index, bool counts);
    ~gpu_energy();
    gpu_energy(const gpu_energy &) = delete;
    gpu_energy &operator=(const gpu_energy &) = delete;

    bool available() const { return ok_; }     // a counter is read
    bool counted_elsewhere() const { return elsewhere_; }
    const std::string &why() const { return why_; }  // why not available
    /// Joules since the driver loaded (NaN if unavailable, 0 if counted elsewhere).
    double read_joules();

private:
    void *lib_ = nullptr, *dev_ = nullptr;
    int (*get_energy_)(void *, unsigned long long *) = nullptr;
    int (*shutdown_)() = nullptr;
    bool ok_ = false, elsewhere_ = false;
    std::string why_;
};

/// Energy over all ranks for a run: the sum of every rank's delta, or NaN with a note when
/// some rank could not read its GPU's counter or the counter did not advance. Collective.
double sum_energy(gpu_energy &e, double j0, double j1, std::string *note);

}  // namespace nas
