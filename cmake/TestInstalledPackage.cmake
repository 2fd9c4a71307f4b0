# ctest script: install the build tree into WORK_DIR/prefix, then configure and build the
# example in EXAMPLE_DIR against it, and check that the production library brought none of the
# tuner with it: no search or profiler target in the package, no libcupti in the program.
# Any failing step fails the test with its output.
file(REMOVE_RECURSE "${WORK_DIR}")

function(run_step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "${what} failed (${status}):\n${out}")
  endif()
endfunction()

run_step("cmake --install" "${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${WORK_DIR}/prefix")
run_step("configuring the example" "${CMAKE_COMMAND}" -S "${EXAMPLE_DIR}" -B "${WORK_DIR}/build"
  -G "${GENERATOR}" -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix -DCMAKE_BUILD_TYPE=Release
  -DCMAKE_CUDA_COMPILER=${CUDA_COMPILER})
run_step("building the example" "${CMAKE_COMMAND}" --build "${WORK_DIR}/build")

file(GLOB targets_files "${WORK_DIR}/prefix/lib*/cmake/iostune/iostuneTargets*.cmake")
foreach(targets_file IN LISTS targets_files)
  file(READ "${targets_file}" targets)
  foreach(part search profiler tuning)
    if(targets MATCHES "iostune::${part}")
      message(FATAL_ERROR "the installed package exports iostune::${part} (${targets_file}); "
                          "iostune::replay must not need the tuner")
    endif()
  endforeach()
endforeach()
execute_process(COMMAND ldd "${WORK_DIR}/build/replay_consumer" RESULT_VARIABLE status
  OUTPUT_VARIABLE linked ERROR_VARIABLE linked)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "ldd of the example failed (${status}):\n${linked}")
endif()
if(linked MATCHES "libcupti")
  message(FATAL_ERROR "the example links libcupti through iostune::replay:\n${linked}")
endif()
message(STATUS "the example built against the installed package, without libcupti: "
               "${WORK_DIR}/build")
