# SPDX-License-Identifier: MIT
# Helpers for Ember's tests.
#   ember_add_gtest(NAME SOURCES ... LIBS ... [FIXTURES ...])  a GoogleTest binary, each test case its own ctest
#   ember_add_pytest(NAME FILE [FIXTURES ...])                 a pytest file run with the tooling venv
#   ember_add_fuzzer(NAME SOURCES ... SEEDS dir... SECONDS n [INCLUDES dir...] [LINK imported-target...])
#                                                             a libFuzzer target built with clang, run for n s

set(EMBER_VENV ${CMAKE_SOURCE_DIR}/build/venv CACHE PATH "Python venv with the test tooling (packaging/dev.sh makes it)")
set(EMBER_PYTHON ${EMBER_VENV}/bin/python)

function(ember_add_gtest name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS;FIXTURES" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} GTest::gtest GTest::gtest_main ember_compile_options)
  target_include_directories(${name} PRIVATE ${CMAKE_SOURCE_DIR}/engine ${CMAKE_SOURCE_DIR}/tests)
  # Where fixtures and binaries are is compiled in (tests/common/fixture_path.h); an ENVIRONMENT list would not
  # survive gtest_discover_tests, which splits property values at ';'.
  target_compile_definitions(${name} PRIVATE EMBER_TEST_FIXTURE_DIR="${EMBER_FIXTURE_DIR}"
                                             EMBER_TEST_BIN_DIR="${CMAKE_BINARY_DIR}/bin")
  if(ARG_FIXTURES)
    # gtest_discover_tests passes a property list on as its first value only, so several fixtures meet in one
    # no-op setup test that requires them all.
    set(fixtures ${ARG_FIXTURES})
    list(LENGTH ARG_FIXTURES n_fixtures)
    if(n_fixtures GREATER 1)
      set(fixtures ${name}_fixtures)
      add_test(NAME fixtures.${name} COMMAND ${CMAKE_COMMAND} -E true)
      set_tests_properties(fixtures.${name} PROPERTIES FIXTURES_SETUP ${fixtures} FIXTURES_REQUIRED "${ARG_FIXTURES}")
    endif()
    gtest_discover_tests(${name} TEST_PREFIX "${name}." DISCOVERY_TIMEOUT 60 PROPERTIES FIXTURES_REQUIRED "${fixtures}")
  else()
    gtest_discover_tests(${name} TEST_PREFIX "${name}." DISCOVERY_TIMEOUT 60)
  endif()
endfunction()

function(ember_add_pytest name file)
  cmake_parse_arguments(ARG "" "" "FIXTURES;DEPENDS" ${ARGN})
  add_test(NAME ${name}
           COMMAND ${EMBER_PYTHON} -m pytest -q -p no:cacheprovider ${file})
  set_tests_properties(${name} PROPERTIES
    ENVIRONMENT "EMBER_FIXTURES=${EMBER_FIXTURE_DIR};EMBER_GGUF_FIXTURES=${EMBER_FIXTURE_DIR}/gguf;EMBER_BIN=${CMAKE_BINARY_DIR}/bin")
  if(ARG_FIXTURES)
    set_tests_properties(${name} PROPERTIES FIXTURES_REQUIRED "${ARG_FIXTURES}")
  endif()
endfunction()

# libFuzzer needs clang; the main build may use GCC, so the fuzzer is compiled by a custom command straight from
# the sources it needs. Skipped (with a message) where clang++ is missing.
find_program(EMBER_CLANGXX NAMES clang++ clang++-14 clang++-15 clang++-16)
function(ember_add_fuzzer name)
  cmake_parse_arguments(ARG "" "SECONDS" "SOURCES;SEEDS;FIXTURES;INCLUDES;LINK" ${ARGN})
  if(NOT EMBER_FUZZ)
    return()
  endif()
  if(NOT EMBER_CLANGXX)
    message(WARNING "clang++ not found: fuzzer ${name} is not built")
    return()
  endif()
  set(out ${CMAKE_BINARY_DIR}/bin/${name})
  set(extra)
  foreach(dir IN LISTS ARG_INCLUDES)
    list(APPEND extra -I${dir})
  endforeach()
  # A shared library such as Qt6::Core: its headers, the library itself, and -fPIC (Qt requires it).
  foreach(lib IN LISTS ARG_LINK)
    list(APPEND extra -fPIC "-I$<JOIN:$<TARGET_PROPERTY:${lib},INTERFACE_INCLUDE_DIRECTORIES>,$<SEMICOLON>-I>"
                      $<TARGET_FILE:${lib}> -Wl,-rpath,$<TARGET_FILE_DIR:${lib}>)
  endforeach()
  add_custom_command(OUTPUT ${out}
    COMMAND ${EMBER_CLANGXX} -std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
            -I${CMAKE_SOURCE_DIR}/engine/include -I${CMAKE_SOURCE_DIR}/engine ${extra} ${ARG_SOURCES} -o ${out}
    DEPENDS ${ARG_SOURCES}
    COMMENT "Building fuzzer ${name} with clang"
    COMMAND_EXPAND_LISTS
    VERBATIM)
  add_custom_target(${name} ALL DEPENDS ${out})
  set(corpus ${CMAKE_BINARY_DIR}/fuzz/${name}-corpus)
  add_test(NAME fuzz.${name}
           COMMAND ${CMAKE_COMMAND} -E env ASAN_OPTIONS=detect_leaks=1
                   ${CMAKE_SOURCE_DIR}/tests/fuzz/run_fuzzer.sh ${out} ${corpus} ${ARG_SECONDS} ${ARG_SEEDS})
  if(ARG_FIXTURES)
    set_tests_properties(fuzz.${name} PROPERTIES FIXTURES_REQUIRED "${ARG_FIXTURES}")
  endif()
  set_tests_properties(fuzz.${name} PROPERTIES TIMEOUT 600)
endfunction()
