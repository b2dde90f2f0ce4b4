# The optional GPU peers of the benchmarks: NVSHMEM and NCCL. Included from the top CMakeLists
# once CUDA is enabled. Each is looked for, in order:
#   1. HGAS_NVSHMEM_ROOT / HGAS_NCCL_ROOT (a prefix with include/ and lib/);
#   2. the pip packages nvidia-nvshmem-cu13 / nvidia-nccl-cu13 of python3 (their folder is what
#      `python3 -c 'import nvidia.nvshmem as m; print(list(m.__path__)[0])'` prints);
#   3. NCCL only: nccl.h and libnccl beside the CUDA toolkit.
# Absent peers are fine: hgas and the other benchmarks build without them.
# Sets HGAS_HAVE_NVSHMEM, HGAS_NVSHMEM_INCLUDE_DIR, HGAS_NVSHMEM_HOST_LIB, HGAS_NVSHMEM_DEVICE_LIB,
# HGAS_NVSHMEM_LIB_DIR, HGAS_HAVE_NCCL, HGAS_NCCL_INCLUDE_DIR, HGAS_NCCL_LIB, HGAS_NCCL_LIB_DIR.

find_program(HGAS_PYTHON3 NAMES python3 python DOC "python3 asked for the NVSHMEM and NCCL pip packages")

# Folder of a Python package (e.g. nvidia.nvshmem), or "" when python3 or the package is missing.
function(hgas_python_package_dir module out)
  set(${out} "" PARENT_SCOPE)
  if(NOT HGAS_PYTHON3)
    return()
  endif()
  execute_process(
    COMMAND "${HGAS_PYTHON3}" -c "import ${module} as m; print(list(m.__path__)[0])"
    OUTPUT_VARIABLE dir RESULT_VARIABLE rc ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE TIMEOUT 60)
  if(rc EQUAL 0 AND IS_DIRECTORY "${dir}")
    set(${out} "${dir}" PARENT_SCOPE)
  endif()
endfunction()

# First existing file of `names` under `root`/lib and `root`/lib64.
function(hgas_find_in_prefix root out)
  set(${out} "" PARENT_SCOPE)
  foreach(sub lib lib64 targets/x86_64-linux/lib)
    foreach(name ${ARGN})
      if(EXISTS "${root}/${sub}/${name}")
        set(${out} "${root}/${sub}/${name}" PARENT_SCOPE)
        return()
      endif()
    endforeach()
  endforeach()
endfunction()

# --- NVSHMEM -------------------------------------------------------------------------------
set(HGAS_HAVE_NVSHMEM OFF)
set(_nvshmem_root "${HGAS_NVSHMEM_ROOT}")
set(_nvshmem_from "HGAS_NVSHMEM_ROOT")
if(NOT _nvshmem_root)
  hgas_python_package_dir(nvidia.nvshmem _nvshmem_root)
  set(_nvshmem_from "python3 package nvidia.nvshmem")
endif()
if(_nvshmem_root)
  hgas_find_in_prefix("${_nvshmem_root}" _nv_host libnvshmem_host.so.3 libnvshmem_host.so)
  hgas_find_in_prefix("${_nvshmem_root}" _nv_dev libnvshmem_device.a)
  if(EXISTS "${_nvshmem_root}/include/nvshmem.h" AND _nv_host AND _nv_dev)
    set(HGAS_HAVE_NVSHMEM ON)
    set(HGAS_NVSHMEM_INCLUDE_DIR "${_nvshmem_root}/include")
    set(HGAS_NVSHMEM_HOST_LIB "${_nv_host}")
    set(HGAS_NVSHMEM_DEVICE_LIB "${_nv_dev}")
    get_filename_component(HGAS_NVSHMEM_LIB_DIR "${_nv_host}" DIRECTORY)
    message(STATUS "hgas: NVSHMEM found (${_nvshmem_from}): ${_nvshmem_root}")
  elseif(HGAS_NVSHMEM_ROOT)
    message(FATAL_ERROR "HGAS_NVSHMEM_ROOT=${HGAS_NVSHMEM_ROOT} lacks include/nvshmem.h, lib/libnvshmem_host.so.3 "
                        "or lib/libnvshmem_device.a")
  else()
    message(STATUS "hgas: NVSHMEM package at ${_nvshmem_root} is incomplete; hgas-nvshmem-peer is not built")
  endif()
else()
  message(STATUS "hgas: NVSHMEM not found (set HGAS_NVSHMEM_ROOT or pip install nvidia-nvshmem-cu13); "
                 "hgas-nvshmem-peer is not built")
endif()

# --- NCCL ----------------------------------------------------------------------------------
set(HGAS_HAVE_NCCL OFF)
set(_nccl_roots "")
if(HGAS_NCCL_ROOT)
  list(APPEND _nccl_roots "${HGAS_NCCL_ROOT}|HGAS_NCCL_ROOT")
else()
  hgas_python_package_dir(nvidia.nccl _nccl_py)
  if(_nccl_py)
    list(APPEND _nccl_roots "${_nccl_py}|python3 package nvidia.nccl")
  endif()
  if(CUDAToolkit_INCLUDE_DIRS AND CUDAToolkit_LIBRARY_DIR)
    list(GET CUDAToolkit_INCLUDE_DIRS 0 _cuda_inc)
    get_filename_component(_cuda_root "${_cuda_inc}" DIRECTORY)
    list(APPEND _nccl_roots "${_cuda_root}|the CUDA toolkit")
  endif()
endif()
foreach(_entry ${_nccl_roots})
  string(REPLACE "|" ";" _pair "${_entry}")
  list(GET _pair 0 _root)
  list(GET _pair 1 _from)
  hgas_find_in_prefix("${_root}" _nccl_lib libnccl.so.2 libnccl.so)
  if(EXISTS "${_root}/include/nccl.h" AND _nccl_lib)
    set(HGAS_HAVE_NCCL ON)
    set(HGAS_NCCL_INCLUDE_DIR "${_root}/include")
    set(HGAS_NCCL_LIB "${_nccl_lib}")
    get_filename_component(HGAS_NCCL_LIB_DIR "${_nccl_lib}" DIRECTORY)
    file(STRINGS "${_root}/include/nccl.h" _v REGEX "^#define NCCL_(MAJOR|MINOR|PATCH) ")
    string(REGEX REPLACE "[^0-9;]" "" _v "${_v}")
    string(REPLACE ";" "." _v "${_v}")
    message(STATUS "hgas: NCCL ${_v} found (${_from}): ${_root}")
    break()
  elseif(HGAS_NCCL_ROOT)
    message(FATAL_ERROR "HGAS_NCCL_ROOT=${HGAS_NCCL_ROOT} lacks include/nccl.h or lib/libnccl.so.2")
  endif()
endforeach()
if(NOT HGAS_HAVE_NCCL)
  message(STATUS "hgas: NCCL not found (set HGAS_NCCL_ROOT or pip install nvidia-nccl-cu13); hgas-nccl-peer is not built")
endif()
