# Refuses to configure a tree that holds committed merge-conflict markers. A build with one
# set of options compiles other files than a build with another (cuda_none.cpp only without
# CUDA, the UCX transport only with UCX), so a marker in a file this configuration skips would
# otherwise go unnoticed until a user with the other configuration builds.
file(GLOB_RECURSE _hgas_sources LIST_DIRECTORIES false
     "${PROJECT_SOURCE_DIR}/src/*" "${PROJECT_SOURCE_DIR}/include/*" "${PROJECT_SOURCE_DIR}/tools/*"
     "${PROJECT_SOURCE_DIR}/tests/*" "${PROJECT_SOURCE_DIR}/bench/*" "${PROJECT_SOURCE_DIR}/apps/*"
     "${PROJECT_SOURCE_DIR}/examples/*" "${PROJECT_SOURCE_DIR}/cmake/*" "${PROJECT_SOURCE_DIR}/python/*"
     "${PROJECT_SOURCE_DIR}/CMakeLists.txt" "${PROJECT_SOURCE_DIR}/Makefile")
set(_hgas_conflicts "")
foreach(_f IN LISTS _hgas_sources)
  if(_f MATCHES "\\.(md|png|svg|json|txt\\.gz|a|so|o)$" OR _f MATCHES "/__pycache__/")
    continue()
  endif()
  file(STRINGS "${_f}" _hits REGEX "^(<<<<<<<|>>>>>>>)( |$)" LIMIT_COUNT 1)
  if(_hits)
    file(RELATIVE_PATH _rel "${PROJECT_SOURCE_DIR}" "${_f}")
    list(APPEND _hgas_conflicts "${_rel}")
  endif()
endforeach()
if(_hgas_conflicts)
  list(JOIN _hgas_conflicts "\n  " _hgas_list)
  message(FATAL_ERROR "merge-conflict markers (lines starting with <<<<<<< or >>>>>>>) in:\n  ${_hgas_list}\n"
          "resolve them before building")
endif()
