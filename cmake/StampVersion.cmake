# Writes the version header with the commit the sources are at *now*, at every build (not only at
# configure time), so results and DB rows name the code that produced them. A working tree with
# uncommitted changes is stamped "<commit>-dirty". configure_file leaves an unchanged header
# untouched, so nothing recompiles unless the commit changed.
# Run as: cmake -DSOURCE_DIR=... -DOUTPUT=... -DPROJECT_VERSION=... -DCMAKE_BUILD_TYPE=... -P StampVersion.cmake
execute_process(COMMAND git rev-parse --short=12 HEAD
  WORKING_DIRECTORY "${SOURCE_DIR}" OUTPUT_VARIABLE IOSTUNE_GIT_COMMIT
  OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rev_status)
if(NOT rev_status EQUAL 0 OR NOT IOSTUNE_GIT_COMMIT)
  set(IOSTUNE_GIT_COMMIT "unknown")
else()
  execute_process(COMMAND git diff --quiet HEAD --
    WORKING_DIRECTORY "${SOURCE_DIR}" RESULT_VARIABLE dirty ERROR_QUIET)
  if(dirty EQUAL 1)
    string(APPEND IOSTUNE_GIT_COMMIT "-dirty")
  endif()
endif()
configure_file("${SOURCE_DIR}/src/version.h.in" "${OUTPUT}" @ONLY)
