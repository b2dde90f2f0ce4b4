// CUDA VMM allocations exported as POSIX fds (cuda_vmm.hpp).
#include "gpu/cuda_vmm.hpp"

#include <cuda_runtime.h>
#include <cudaTypedefs.h>
#include <unistd.h>

#include <algorithm>
#include <mutex>

namespace hgas::gpu::vmm {

namespace {

// The driver's VMM entry points, looked up once per process (facts of the driver).
struct driver {
    PFN_cuDeviceGet_v2000 get = nullptr;
    PFN_cuDeviceGetAttribute_v2000 attr = nullptr;
    PFN_cuGetErrorString_v6000 error_string = nullptr;
    PFN_cuMemGetAllocationGranularity_v10020 granularity = nullptr;
    PFN_cuMemCreate_v10020 create = nullptr;
    PFN_cuMemRelease_v10020 release = nullptr;
    PFN_cuMemAddressReserve_v10020 reserve = nullptr;
    PFN_cuMemAddressFree_v10020 address_free = nullptr;
    PFN_cuMemMap_v10020 map = nullptr;
    PFN_cuMemUnmap_v10020 unmap = nullptr;
    PFN_cuMemSetAccess_v10020 set_access = nullptr;
    PFN_cuMemExportToShareableHandle_v10020 export_handle = nullptr;
    PFN_cuMemImportFromShareableHandle_v10020 import_handle = nullptr;
    // Exporting a program's own VMM allocations (export_fd).
    PFN_cuMemRetainAllocationHandle_v11000 retain = nullptr;
    PFN_cuMemGetAllocationPropertiesFromHandle_v10020 props = nullptr;
    bool complete() const {
        return get && attr && granularity && create && release && reserve && address_free && map && unmap &&
               set_access && export_handle && import_handle;
    }
};

template <class F>
void lookup(const char *name, unsigned version, F &out) {
    void *p = nullptr;
    cudaDriverEntryPointQueryResult q{};
    if (cudaGetDriverEntryPointByVersion(name, &p, version, cudaEnableDefault, &q) == cudaSuccess &&
        q == cudaDriverEntryPointSuccess)
        out = reinterpret_cast<F>(p);
    else
        cudaGetLastError();
}

const driver &drv() {
    static driver d;
    static std::once_flag once;
    std::call_once(once, [] {
        lookup("cuDeviceGet", 2000, d.get);
        lookup("cuDeviceGetAttribute", 2000, d.attr);
        lookup("cuGetErrorString", 6000, d.error_string);
        // 10020: the VMM API as introduced in CUDA 10.2, unchanged since.
        lookup("cuMemGetAllocationGranularity", 10020, d.granularity);
        lookup("cuMemCreate", 10020, d.create);
        lookup("cuMemRelease", 10020, d.release);
        lookup("cuMemAddressReserve", 10020, d.reserve);
        lookup("cuMemAddressFree", 10020, d.address_free);
        lookup("cuMemMap", 10020, d.map);
        lookup("cuMemUnmap", 10020, d.unmap);
        lookup("cuMemSetAccess", 10020, d.set_access);
        lookup("cuMemExportToShareableHandle", 10020, d.export_handle);
        lookup("cuMemImportFromShareableHandle", 10020, d.import_handle);
        lookup("cuMemRetainAllocationHandle", 11000, d.retain);
        lookup("cuMemGetAllocationPropertiesFromHandle", 10020, d.props);
    });
    return d;
}

const char *text(CUresult r) {
    const char *msg = nullptr;
    if (drv().error_string) drv().error_string(r, &msg);
    return msg ? msg : "unknown error";
}

status cu_fail(const char *what, CUresult r) {
    return fail(status::transport, "cuda: %s failed: %s (CUresult %d)", what, text(r), static_cast<int>(r));
}

#define CU_DRV(call)                                       \
    do {                                                   \
        CUresult r_ = (call);                              \
        if (r_ != CUDA_SUCCESS) return cu_fail(#call, r_); \
    } while (0)

CUmemAllocationProp device_prop(CUdevice owner, bool exportable = true) {
    CUmemAllocationProp prop{};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = owner;
    prop.requestedHandleTypes = exportable ? CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR : CU_MEM_HANDLE_TYPE_NONE;
    return prop;
}

// Reserves an address range for m.size bytes, maps m.handle there and gives GPU `dev` access.
status map_for(mapping &m, size_t align, CUdevice dev) {
    const driver &D = drv();
    CU_DRV(D.reserve(&m.va, m.size, align, 0, 0));
    CU_DRV(D.map(m.va, m.size, 0, m.handle, 0));
    m.mapped = true;
    CUmemAccessDesc acc{};
    acc.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    acc.location.id = dev;
    acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    CU_DRV(D.set_access(m.va, m.size, &acc, 1));
    return status::ok;
}

}  // namespace

bool supported(int dev, std::string &why) {
    const driver &D = drv();
    if (!D.complete()) {
        why = "the driver does not provide the VMM entry points (cuMemCreate and friends)";
        return false;
    }
    CUdevice cd = 0;
    if (D.get(&cd, dev) != CUDA_SUCCESS) {
        why = "cuDeviceGet failed";
        return false;
    }
    int v = 0;
    if (D.attr(&v, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, cd) != CUDA_SUCCESS || !v) {
        why = "the device reports no VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED";
        return false;
    }
    v = 0;
    if (D.attr(&v, CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED, cd) != CUDA_SUCCESS || !v) {
        why = "the device reports no HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED";
        return false;
    }
    return true;
}

result<mapping> allocate(int dev, size_t n, uint32_t key, const std::string &what) {
    const driver &D = drv();
    if (!D.complete())
        return fail(status::unsupported, "cuda: the driver lacks the VMM entry points; set HGAS_CUDA_IPC=legacy");
    CUdevice cd = 0;
    CU_DRV(D.get(&cd, dev));
    const CUmemAllocationProp prop = device_prop(cd);
    size_t gran = 0;
    CU_DRV(D.granularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED));
    if (!gran) gran = 2u << 20;
    mapping m;
    m.size = (n + gran - 1) / gran * gran;
    m.key = key;
    const CUresult r = D.create(&m.handle, m.size, &prop, 0);
    if (r != CUDA_SUCCESS)
        return fail(status::no_memory, "cuda: cannot allocate %zu bytes on GPU %d for %s (cuMemCreate: %s); lower "
                    "HGAS_CUDA_HEAP_SIZE / HGAS_CUDA_LOCAL_HEAP_SIZE", m.size, dev, what.c_str(), text(r));
    m.has_handle = true;
    status s = map_for(m, gran, cd);
    if (s == status::ok) {
        int fd = -1;
        const CUresult e = D.export_handle(&fd, m.handle, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
        if (e == CUDA_SUCCESS) m.fd = fd;
        else s = cu_fail("cuMemExportToShareableHandle", e);
    }
    if (s != status::ok) {
        release(m);
        return s;
    }
    return m;
}

result<mapping> allocate_user(int dev, size_t n, bool exportable) {
    const driver &D = drv();
    if (!D.complete()) return fail(status::unsupported, "cuda: the driver lacks the VMM entry points");
    CUdevice cd = 0;
    CU_DRV(D.get(&cd, dev));
    const CUmemAllocationProp prop = device_prop(cd, exportable);
    size_t gran = 0;
    CU_DRV(D.granularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED));
    if (!gran) gran = 2u << 20;
    mapping m;
    m.size = (std::max<size_t>(n, 1) + gran - 1) / gran * gran;
    const CUresult r = D.create(&m.handle, m.size, &prop, 0);
    if (r != CUDA_SUCCESS)
        return fail(status::no_memory, "cuda: cannot allocate %zu bytes on GPU %d (cuMemCreate: %s)", m.size, dev, text(r));
    m.has_handle = true;
    status s = map_for(m, gran, cd);
    if (s != status::ok) {
        release(m);
        return s;
    }
    return m;
}

int export_fd(CUdeviceptr p) {
    const driver &D = drv();
    if (!D.complete() || !D.retain || !D.props) return -1;
    CUmemGenericAllocationHandle h = 0;
    if (D.retain(&h, reinterpret_cast<void *>(p)) != CUDA_SUCCESS) return -1;  // not VMM memory
    CUmemAllocationProp prop{};
    int fd = -1;
    if (D.props(&prop, h) == CUDA_SUCCESS && (prop.requestedHandleTypes & CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) &&
        D.export_handle(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0) != CUDA_SUCCESS)
        fd = -1;
    D.release(h);  // the retain's reference; the fd holds one of its own
    return fd;
}

result<mapping> import(int fd, size_t size, int owner, int dev) {
    const driver &D = drv();
    mapping m;
    m.size = size;
    const CUresult r = D.import_handle(&m.handle, reinterpret_cast<void *>(static_cast<uintptr_t>(fd)),
                                       CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
    close(fd);  // the imported handle holds the allocation
    if (r != CUDA_SUCCESS) return cu_fail("cuMemImportFromShareableHandle (a peer's segment)", r);
    m.has_handle = true;
    status s = [&]() -> status {
        CUdevice ocd = 0, mine = 0;
        CU_DRV(D.get(&ocd, owner));
        CU_DRV(D.get(&mine, dev));  // this rank's GPU: the owner's own one when both share it
        const CUmemAllocationProp prop = device_prop(ocd);
        size_t gran = 0;
        CU_DRV(D.granularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
        return map_for(m, gran, mine);
    }();
    if (s != status::ok) {
        release(m);
        return s;
    }
    return m;
}

void release(mapping &m) {
    const driver &D = drv();
    if (m.mapped) D.unmap(m.va, m.size);
    if (m.va) D.address_free(m.va, m.size);
    if (m.has_handle) D.release(m.handle);
    if (m.fd >= 0) close(m.fd);
    m = mapping{};
}

}  // namespace hgas::gpu::vmm
