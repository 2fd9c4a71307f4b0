# Install and export: another project does find_package(iostune) and links iostune::replay
# (examples/replay_consumer). The libraries are static, so every library replay links is exported
# with it; each gets its short name (iostune::core, iostune::engine, ..., iostune::replay). The
# tuning job (iostune::tuning: search, CUPTI profiler) is no part of the static package; the C
# API's shared library (iostune::c, libiostune.so, examples/c_api) holds it inside, with only
# iostune_* symbols exported. The Python package is installed by python/CMakeLists.txt.
include(CMakePackageConfigHelpers)

set(IOSTUNE_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/iostune")
set(iostune_exported iostune_warnings iostune_core iostune_engine iostune_db iostune_onnx
    iostune_replay)
foreach(target IN LISTS iostune_exported)
  if(NOT TARGET ${target})
    message(STATUS "iostune: ${target} not built; the package is not installable yet")
    return()
  endif()
  string(REPLACE "iostune_" "" export_name "${target}")
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${export_name})
endforeach()

install(TARGETS ${iostune_exported} EXPORT iostuneTargets
  ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}")
install(FILES "${PROJECT_SOURCE_DIR}/replay/include/iostune/replay.h"
  "${PROJECT_SOURCE_DIR}/replay/include/iostune/batch_replayer.h"
  "${PROJECT_SOURCE_DIR}/replay/include/iostune/batch_plan.h"
  DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}/iostune")
if(TARGET iostune_c)
  install(TARGETS iostune_c EXPORT iostuneTargets
    LIBRARY DESTINATION "${CMAKE_INSTALL_LIBDIR}")
  install(FILES "${PROJECT_SOURCE_DIR}/capi/include/iostune/iostune.h"
    DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}/iostune")
endif()
if(TARGET iostune)
  install(TARGETS iostune RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}")
endif()
install(EXPORT iostuneTargets NAMESPACE iostune:: DESTINATION "${IOSTUNE_INSTALL_CMAKEDIR}")

configure_package_config_file("${PROJECT_SOURCE_DIR}/cmake/iostuneConfig.cmake.in"
  "${PROJECT_BINARY_DIR}/iostuneConfig.cmake" INSTALL_DESTINATION "${IOSTUNE_INSTALL_CMAKEDIR}")
write_basic_package_version_file("${PROJECT_BINARY_DIR}/iostuneConfigVersion.cmake"
  COMPATIBILITY SameMinorVersion)
install(FILES "${PROJECT_BINARY_DIR}/iostuneConfig.cmake"
  "${PROJECT_BINARY_DIR}/iostuneConfigVersion.cmake" "${PROJECT_SOURCE_DIR}/cmake/FindCUDNN.cmake"
  DESTINATION "${IOSTUNE_INSTALL_CMAKEDIR}")

# CPU-only check that the installed package works: install into a temporary prefix, then build
# the replay consumer against it, build and run the C example, and use the installed Python
# package (cmake/TestInstalledPackage.cmake).
if(IOSTUNE_BUILD_TESTS)
  set(c_api_checks)
  if(TARGET iostune_c)
    list(APPEND c_api_checks -DC_EXAMPLE_DIR=${PROJECT_SOURCE_DIR}/examples/c_api)
  endif()
  if(TARGET iostune_python AND EXISTS /usr/bin/python3)
    list(APPEND c_api_checks -DPYTHON=/usr/bin/python3 -DPYTHON_DIR=${IOSTUNE_PYTHON_INSTALL_DIR})
  endif()
  add_test(NAME install_replay_consumer
    COMMAND "${CMAKE_COMMAND}" -DBUILD_DIR=${PROJECT_BINARY_DIR}
            -DEXAMPLE_DIR=${PROJECT_SOURCE_DIR}/examples/replay_consumer
            -DWORK_DIR=${PROJECT_BINARY_DIR}/install_test
            -DCUDA_COMPILER=${CMAKE_CUDA_COMPILER}
            -DGENERATOR=${CMAKE_GENERATOR}
            ${c_api_checks}
            -P "${PROJECT_SOURCE_DIR}/cmake/TestInstalledPackage.cmake")
endif()
