# ctest script: install the build tree into WORK_DIR/prefix, then configure and build the
# example in EXAMPLE_DIR against it. Any failing step fails the test with its output.
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
message(STATUS "the example built against the installed package: ${WORK_DIR}/build")
