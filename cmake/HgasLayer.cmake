# hgas_layer(name SOURCES ... DEPENDS ...): one static library per layer. A layer may only
# depend on layers below it (DESIGN.md); since each layer links only what it names, an upward
# include fails to build.
function(hgas_layer name)
  cmake_parse_arguments(L "" "" "SOURCES;DEPENDS" ${ARGN})
  add_library(hgas_${name} STATIC ${L_SOURCES})
  target_include_directories(hgas_${name} PUBLIC
    ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR}/include ${CMAKE_BINARY_DIR}/generated)
  target_link_libraries(hgas_${name} PUBLIC ${L_DEPENDS})
endfunction()
