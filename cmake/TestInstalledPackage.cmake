# ctest script: install the build tree into WORK_DIR/prefix, then configure and build the
# example in EXAMPLE_DIR against it, and check that the production library brought none of the
# tuner with it: no search or profiler target in the package, no libcupti in the program.
# Then the C API from the same prefix: the C example in C_EXAMPLE_DIR built against it and run
# (a simulated search without a GPU), and the installed Python package imported with PYTHON
# from <prefix>/PYTHON_DIR, loading the installed libiostune.so.1.
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

if(C_EXAMPLE_DIR)
  run_step("configuring the C example" "${CMAKE_COMMAND}" -S "${C_EXAMPLE_DIR}"
    -B "${WORK_DIR}/build-c" -G "${GENERATOR}" -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix
    -DCMAKE_BUILD_TYPE=Release)
  run_step("building the C example" "${CMAKE_COMMAND}" --build "${WORK_DIR}/build-c")
  execute_process(COMMAND "${WORK_DIR}/build-c/iostune_c_example" "${WORK_DIR}/c_example.db"
    RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT status EQUAL 0 OR NOT out MATCHES "all steps passed")
    message(FATAL_ERROR "the installed C example failed (${status}):\n${out}")
  endif()
  execute_process(COMMAND ldd "${WORK_DIR}/build-c/iostune_c_example" OUTPUT_VARIABLE linked)
  if(NOT linked MATCHES "libiostune\\.so\\.1 => ${WORK_DIR}/prefix/")
    message(FATAL_ERROR "the C example does not load the installed libiostune.so.1:\n${linked}")
  endif()
  message(STATUS "the C example built against the installed libiostune.so.1 and ran:\n${out}")
endif()
if(PYTHON AND PYTHON_DIR)
  execute_process(COMMAND "${CMAKE_COMMAND}" -E env --unset=IOSTUNE_LIBRARY
      "PYTHONPATH=${WORK_DIR}/prefix/${PYTHON_DIR}" "${PYTHON}" -c
      "import iostune, iostune._lib as l; r = iostune.search('squeezenet1_1', cost='sim', db='${WORK_DIR}/py.db', progress=False, notice=lambda line: None); rows = iostune.report('${WORK_DIR}/py.db'); assert [x['schedule_id'] for x in rows] == [r.schedule_id], rows; print(l.lib()._name, iostune.version())"
    RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT status EQUAL 0 OR NOT out MATCHES "^${WORK_DIR}/prefix/")
    message(FATAL_ERROR "the installed Python package failed (${status}):\n${out}")
  endif()
  message(STATUS "the installed Python package searched and reported: ${out}")
endif()
