# Target helpers that keep every system's CMakeLists short and uniform.
#
#   tessera_library(name SRCS ... DEPS ... [TORCH])
#   tessera_binary(name SRCS ... DEPS ... [TORCH])        every binary follows core/cli.h
#   tessera_test(name SRCS ... DEPS ... [LABELS unit|integration|slow] [TIMEOUT s] [SERIAL]
#                [TORCH])                                SERIAL: never runs beside other tests
#   tessera_benchmark(name SRCS ... DEPS ... [TORCH])
#   tessera_fuzzer(name SRCS ... DEPS ...)                built only with TESSERA_FUZZ
#
# TORCH links libtorch and reuses the shared <torch/torch.h> precompiled header.

include(GoogleTest)

add_custom_target(benchmarks)
add_custom_target(fuzzers)
set_property(GLOBAL PROPERTY TESSERA_BINARIES "")
set_property(GLOBAL PROPERTY TESSERA_FUZZERS "")

# The fuzz build (clang, TESSERA_FUZZ) builds only the `fuzzers` target. Other executables are
# still defined, so CMake code that refers to them keeps working, but are left out of `all`.
set(_tessera_exclude "")
if(TESSERA_FUZZ)
  set(_tessera_exclude EXCLUDE_FROM_ALL)
endif()

function(_tessera_common target)
  cmake_parse_arguments(ARG "TORCH" "" "DEPS" ${ARGN})
  target_include_directories(${target} PUBLIC ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR})
  if(ARG_DEPS)
    target_link_libraries(${target} PUBLIC ${ARG_DEPS})
  endif()
  if(ARG_TORCH)
    target_link_libraries(${target} PUBLIC tessera_torch)
    target_precompile_headers(${target} REUSE_FROM tessera_torch)
  endif()
endfunction()

function(tessera_library name)
  cmake_parse_arguments(ARG "TORCH" "" "SRCS;DEPS" ${ARGN})
  add_library(${name} STATIC ${ARG_SRCS})
  _tessera_common(${name} DEPS ${ARG_DEPS})
  if(ARG_TORCH)
    _tessera_common(${name} TORCH)
  endif()
endfunction()

function(tessera_binary name)
  cmake_parse_arguments(ARG "TORCH" "" "SRCS;DEPS" ${ARGN})
  add_executable(${name} ${_tessera_exclude} ${ARG_SRCS})
  _tessera_common(${name} DEPS ${ARG_DEPS})
  if(ARG_TORCH)
    _tessera_common(${name} TORCH)
  endif()
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/bin)
  if(NOT TESSERA_FUZZ)
    set_property(GLOBAL APPEND PROPERTY TESSERA_BINARIES ${name})
  endif()
endfunction()

function(tessera_test name)
  cmake_parse_arguments(ARG "TORCH;SERIAL" "TIMEOUT" "SRCS;DEPS;LABELS" ${ARGN})
  if(NOT ARG_LABELS)
    set(ARG_LABELS unit)
  endif()
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 300)
  endif()
  add_executable(${name} ${_tessera_exclude} ${ARG_SRCS})
  _tessera_common(${name} DEPS ${ARG_DEPS} GTest::gtest GTest::gmock GTest::gtest_main)
  if(ARG_TORCH)
    _tessera_common(${name} TORCH)
  endif()
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/tests)
  if(TESSERA_FUZZ)
    return()  # defined (so CMake code may refer to it) but neither built nor run
  endif()
  # Discovery at test time keeps builds from running test binaries. The environment goes in
  # through env(1) as the test executor: gtest_discover_tests splits a list-valued ENVIRONMENT
  # property into separate properties, so only its first entry ever reached a test.
  set_target_properties(${name} PROPERTIES CROSSCOMPILING_EMULATOR
    "/usr/bin/env;TESSERA_BIN_DIR=${PROJECT_BINARY_DIR}/bin;TESSERA_SOURCE_DIR=${PROJECT_SOURCE_DIR};OMP_NUM_THREADS=1;OPENBLAS_NUM_THREADS=1")
  gtest_discover_tests(${name}
    DISCOVERY_MODE PRE_TEST
    DISCOVERY_TIMEOUT 120
    PROPERTIES LABELS "${ARG_LABELS}" TIMEOUT ${ARG_TIMEOUT} RUN_SERIAL ${ARG_SERIAL})
endfunction()

function(tessera_benchmark name)
  cmake_parse_arguments(ARG "TORCH" "" "SRCS;DEPS" ${ARGN})
  add_executable(${name} ${_tessera_exclude} ${ARG_SRCS})
  _tessera_common(${name} DEPS ${ARG_DEPS} benchmark::benchmark)
  if(ARG_TORCH)
    _tessera_common(${name} TORCH)
  endif()
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/bench)
  add_dependencies(benchmarks ${name})
endfunction()

function(tessera_fuzzer name)
  cmake_parse_arguments(ARG "" "" "SRCS;DEPS" ${ARGN})
  if(NOT TESSERA_FUZZ)
    return()
  endif()
  add_executable(${name} ${ARG_SRCS})
  _tessera_common(${name} DEPS ${ARG_DEPS})
  target_link_options(${name} PRIVATE -fsanitize=fuzzer)
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/fuzz)
  add_dependencies(fuzzers ${name})
  set_property(GLOBAL APPEND PROPERTY TESSERA_FUZZERS ${name})
endfunction()

# Writes the lists of binaries and fuzzers (read by scripts) and adds the test that every
# binary follows the command-line conventions (--help, --version, exit code 2 on a bad flag).
function(tessera_finalize)
  get_property(binaries GLOBAL PROPERTY TESSERA_BINARIES)
  get_property(fuzzers GLOBAL PROPERTY TESSERA_FUZZERS)
  list(JOIN binaries "\n" binaries_text)
  list(JOIN fuzzers "\n" fuzzers_text)
  file(WRITE ${PROJECT_BINARY_DIR}/binaries.txt "${binaries_text}\n")
  file(WRITE ${PROJECT_BINARY_DIR}/fuzzers.txt "${fuzzers_text}\n")
  if(NOT TESSERA_FUZZ AND binaries)
    add_test(NAME cli_conventions
             COMMAND ${PROJECT_SOURCE_DIR}/scripts/check_cli ${PROJECT_BINARY_DIR})
    set_tests_properties(cli_conventions PROPERTIES LABELS unit TIMEOUT 120)
  endif()
endfunction()
