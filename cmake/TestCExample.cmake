# ctest script: compile examples/c_api/main.c with the C compiler CC as strict C11 (warnings are
# errors) against iostune.h in INCLUDE and LIBRARY (libiostune.so.1), run it on a fresh database
# in WORK_DIR and require "all steps passed".
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")
get_filename_component(library_dir "${LIBRARY}" DIRECTORY)
execute_process(
  COMMAND "${CC}" -std=c11 -pedantic -Wall -Wextra -Werror "-I${INCLUDE}" "-I${CUDA_INCLUDE}"
          "${SOURCE}" -o "${WORK_DIR}/iostune_c_example" "-L${library_dir}" -liostune
          "-L${CUDA_LIBRARY_DIR}" -lcudart "-Wl,-rpath,${library_dir}:${CUDA_LIBRARY_DIR}"
  RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "compiling the C example failed (${status}):\n${out}")
endif()
execute_process(COMMAND "${WORK_DIR}/iostune_c_example" "${WORK_DIR}/c_example.db"
  RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE out)
message("${out}")
if(NOT status EQUAL 0 OR NOT out MATCHES "all steps passed")
  message(FATAL_ERROR "the C example failed (${status})")
endif()
