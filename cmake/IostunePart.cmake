# iostune_part(<target> [DIRS dir...] [DEPS target...]): one library per part of the product,
# built from every .cpp/.cu file in the given folders (relative to the current source dir).
# Include paths are rooted at the project, so sources say #include "src/graph.h".
function(iostune_part target)
  cmake_parse_arguments(PART "" "" "DIRS;DEPS" ${ARGN})
  if(NOT PART_DIRS)
    set(PART_DIRS ".")
  endif()
  set(sources)
  foreach(dir IN LISTS PART_DIRS)
    file(GLOB found CONFIGURE_DEPENDS "${CMAKE_CURRENT_SOURCE_DIR}/${dir}/*.cpp"
                                      "${CMAKE_CURRENT_SOURCE_DIR}/${dir}/*.cu")
    list(APPEND sources ${found})
  endforeach()
  if(NOT sources)
    message(STATUS "iostune: ${target} has no sources yet; not built")
    return()
  endif()
  add_library(${target} STATIC ${sources})
  string(REPLACE "iostune_" "" alias "${target}")
  add_library(iostune::${alias} ALIAS ${target})
  target_include_directories(${target} PUBLIC
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}>
    $<BUILD_INTERFACE:${PROJECT_BINARY_DIR}/generated>)
  target_link_libraries(${target} PUBLIC ${PART_DEPS} PRIVATE iostune_warnings)
  add_dependencies(${target} iostune_version_stamp)
endfunction()
