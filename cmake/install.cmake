# Install rules (included last by the top-level CMakeLists.txt). `cmake --install <build>
# [--prefix P]` gives a prefix that programs build against and run from:
#   bin/      hgasrun, hgas-info, oshrun, oshcc, oshc++, hgas-cc, hgas-c++
#   include/  shmem.h, shmemx.h, hgas/ (hgas.h, hgas.hpp, status.h, hgas_device.h,
#             hgas_device.cuh, impl/)
#   lib/      libhgas.so*, libhgas_shmem.so*
#             pkgconfig/hgas.pc, pkgconfig/hgas-shmem.pc
#             cmake/hgas/   find_package(hgas): hgas::hgas, hgas::shmem
#             hgas-ucx/     UCX's libraries and plugins, when they come from the build tree
# Binaries find their libraries through $ORIGIN-relative RPATHs, so the prefix can be moved.
include(CMakePackageConfigHelpers)

# UCX: a UCX inside the build tree (the pinned wheel in <build>/venv) is copied into the
# prefix, so that the prefix does not depend on the build tree; a UCX installed elsewhere
# (HGAS_UCX_ROOT, a system package) is referenced where it is.
set(HGAS_INSTALL_UCX "AUTO" CACHE STRING "Copy UCX's libraries into the install prefix: ON, OFF or AUTO (when UCX lies in the build tree)")
set(_hgas_ucx_rpath "")
if(HGAS_HAVE_UCX)
  get_target_property(_hgas_ucp ucx::ucp IMPORTED_LOCATION)
  if(NOT _hgas_ucp)
    get_target_property(_hgas_ucp ucx::ucp IMPORTED_LOCATION_RELEASE)
  endif()
  get_filename_component(_hgas_ucx_libdir "${_hgas_ucp}" DIRECTORY)
  set(_hgas_bundle ${HGAS_INSTALL_UCX})
  if(_hgas_bundle STREQUAL "AUTO")
    string(FIND "${_hgas_ucx_libdir}/" "${CMAKE_BINARY_DIR}/" _at)
    if(_at EQUAL 0)
      set(_hgas_bundle ON)
    else()
      set(_hgas_bundle OFF)
    endif()
  endif()
  if(_hgas_bundle)
    # The shared libraries under their sonames (libucp.so.0: what the loader looks for), and
    # the plugins in ucx/ beside libucs, where UCX looks for them (also by soname); no static
    # libraries, no development files. (The wheel holds copies, not links, under each name.)
    install(DIRECTORY "${_hgas_ucx_libdir}/" DESTINATION "${CMAKE_INSTALL_LIBDIR}/hgas-ucx"
            USE_SOURCE_PERMISSIONS FILES_MATCHING PATTERN "*.so.0"
            PATTERN "cmake" EXCLUDE PATTERN "pkgconfig" EXCLUDE)
    set(_hgas_ucx_rpath "hgas-ucx")
  else()
    set(_hgas_ucx_rpath "${_hgas_ucx_libdir}")
  endif()
endif()

# RPATHs: libraries look beside themselves, programs in ../lib; both where UCX is.
file(RELATIVE_PATH _hgas_bin_to_lib "/p/${CMAKE_INSTALL_BINDIR}" "/p/${CMAKE_INSTALL_LIBDIR}")
set(_hgas_lib_rpath "$ORIGIN")
set(_hgas_bin_rpath "$ORIGIN/${_hgas_bin_to_lib}")
if(_hgas_ucx_rpath STREQUAL "hgas-ucx")
  list(APPEND _hgas_lib_rpath "$ORIGIN/hgas-ucx")
  list(APPEND _hgas_bin_rpath "$ORIGIN/${_hgas_bin_to_lib}/hgas-ucx")
elseif(_hgas_ucx_rpath)
  list(APPEND _hgas_lib_rpath "${_hgas_ucx_rpath}")
  list(APPEND _hgas_bin_rpath "${_hgas_ucx_rpath}")
endif()
set_target_properties(hgas hgas_shmem PROPERTIES INSTALL_RPATH "${_hgas_lib_rpath}")
set_target_properties(hgasrun hgas-info PROPERTIES INSTALL_RPATH "${_hgas_bin_rpath}")

# Libraries, programs, headers. hgas_shmem is exported as hgas::shmem.
set_target_properties(hgas_shmem PROPERTIES EXPORT_NAME shmem)
install(TARGETS hgas hgas_shmem EXPORT hgasTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS hgasrun hgas-info RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES ${PROJECT_SOURCE_DIR}/include/shmem.h ${PROJECT_SOURCE_DIR}/include/shmemx.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# Every public header: the C and C++ APIs, the device API (hgas_device.cuh) and what it
# includes from impl/.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/hgas DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.h" PATTERN "*.hpp" PATTERN "*.cuh")

# find_package(hgas)
set(_hgas_cmake_dir "${CMAKE_INSTALL_LIBDIR}/cmake/hgas")
install(EXPORT hgasTargets NAMESPACE hgas:: DESTINATION ${_hgas_cmake_dir})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/hgasConfig.cmake.in
  ${CMAKE_BINARY_DIR}/install/hgasConfig.cmake INSTALL_DESTINATION ${_hgas_cmake_dir}
  PATH_VARS CMAKE_INSTALL_BINDIR)
# 0.x: a new minor version may change the API, so only the same minor version matches.
write_basic_package_version_file(${CMAKE_BINARY_DIR}/install/hgasConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/install/hgasConfig.cmake ${CMAKE_BINARY_DIR}/install/hgasConfigVersion.cmake
        DESTINATION ${_hgas_cmake_dir})

# pkg-config
file(RELATIVE_PATH HGAS_PC_TO_PREFIX "/p/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/p")
foreach(pc hgas hgas-shmem)
  configure_file(${PROJECT_SOURCE_DIR}/cmake/${pc}.pc.in ${CMAKE_BINARY_DIR}/install/${pc}.pc @ONLY)
  install(FILES ${CMAKE_BINARY_DIR}/install/${pc}.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endforeach()
