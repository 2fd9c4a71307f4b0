# ONNX importer fixtures: tests/fixtures/export_torchvision.py exports torchvision and small
# models with PyTorch (the oracle) into the build tree. Without a Python that imports torch the
# script records "skipped", the PyTorch-backed test cases pass without checking anything and the
# CTest entry "onnx: pytorch fixtures" reports Skipped, so the gap is visible.
set(IOSTUNE_PYTHON /usr/bin/python3 CACHE FILEPATH
    "Python with torch and torchvision that generates the ONNX test fixtures")
set(onnx_fixture_dir "${CMAKE_CURRENT_BINARY_DIR}/onnx_fixtures")
set(onnx_fixture_script "${PROJECT_SOURCE_DIR}/tests/fixtures/export_torchvision.py")
if(EXISTS "${IOSTUNE_PYTHON}")
  add_custom_command(
    OUTPUT "${onnx_fixture_dir}/manifest.json"
    COMMAND "${IOSTUNE_PYTHON}" "${onnx_fixture_script}" "${onnx_fixture_dir}"
    DEPENDS "${onnx_fixture_script}"
    COMMENT "Exporting torchvision/PyTorch ONNX fixtures with ${IOSTUNE_PYTHON}"
    VERBATIM)
  add_custom_target(onnx_fixtures DEPENDS "${onnx_fixture_dir}/manifest.json")
  add_dependencies(test_onnx onnx_fixtures)
else()
  file(WRITE "${onnx_fixture_dir}/status.txt" "skipped: ${IOSTUNE_PYTHON} does not exist\n")
  file(WRITE "${onnx_fixture_dir}/manifest.json" "{\"skipped\": true, \"models\": []}\n")
endif()
target_compile_definitions(test_onnx PRIVATE IOSTUNE_ONNX_FIXTURES="${onnx_fixture_dir}")
add_test(NAME "onnx: pytorch fixtures" COMMAND "${CMAKE_COMMAND}" -E cat "${onnx_fixture_dir}/status.txt")
set_tests_properties("onnx: pytorch fixtures" PROPERTIES SKIP_REGULAR_EXPRESSION "^skipped")
if(TARGET iostune)
  add_dependencies(test_onnx iostune)
  target_compile_definitions(test_onnx PRIVATE IOSTUNE_EXE="$<TARGET_FILE:iostune>")
endif()
# The GPU check's metrics and verdicts (L2 relative error, NaN refusal), without torch or a GPU.
if(EXISTS /usr/bin/python3)
  add_test(NAME "onnx: gpu check self-test"
    COMMAND /usr/bin/python3 ${PROJECT_SOURCE_DIR}/scripts/gpu_onnx_check.py --self-test)
endif()
# Issue 33's structural fuzz: small PyTorch exports mutated with the onnx API (dimensions,
# attributes, op types, arity, names, sizes), each through `iostune run --backend cpu`; prints
# the counts per mutation class. Skipped without torch and onnx.
# onnx_cpu_run runs `iostune run --backend cpu`'s steps in forked children, without the CUDA
# libraries whose loading is most of a CLI run; a sample goes through the CLI itself.
add_executable(onnx_cpu_run onnx/cpu_run/onnx_cpu_run.cpp)
target_link_libraries(onnx_cpu_run PRIVATE iostune_onnx iostune_core iostune_warnings)
add_dependencies(test_onnx onnx_cpu_run)
if(TARGET iostune AND EXISTS /usr/bin/python3)
  add_test(NAME "onnx: structural fuzz"
    COMMAND /usr/bin/python3 ${PROJECT_SOURCE_DIR}/tests/onnx/structural_fuzz.py
            --iostune $<TARGET_FILE:iostune> --runner $<TARGET_FILE:onnx_cpu_run>
            --work ${CMAKE_CURRENT_BINARY_DIR}/onnx_structural_fuzz)
  set_tests_properties("onnx: structural fuzz" PROPERTIES
    SKIP_REGULAR_EXPRESSION "^skipped" TIMEOUT 600)
endif()
