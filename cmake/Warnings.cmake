# Warning flags for strata's own targets, in one place. Third-party and
# generated code is compiled without them.
set(STRATA_WARNINGS -Wall -Wextra -Werror -Wno-unused-parameter -Wnon-virtual-dtor
    -Wimplicit-fallthrough)
if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  list(APPEND STRATA_WARNINGS -Wthread-safety -Wthread-safety-beta -Wshadow-field
       -Wunreachable-code)
endif()

# strata_target(<target>): applies strata's warnings and include root.
function(strata_target target)
  target_compile_options(${target} PRIVATE ${STRATA_WARNINGS})
  target_include_directories(${target} PUBLIC ${PROJECT_SOURCE_DIR}/src)
endfunction()

# strata_unity_libraries(<dir>): with STRATA_QUICK_BUILD, every static
# library defined under <dir> compiles as unity sources of up to 8 files
# each. Names private to a .cc file (anonymous namespaces) therefore stay
# unique within their library.
function(strata_unity_libraries dir)
  if(NOT STRATA_QUICK_BUILD)
    return()
  endif()
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(subdir ${subdirs})
    get_property(targets DIRECTORY ${subdir} PROPERTY BUILDSYSTEM_TARGETS)
    foreach(target ${targets})
      get_target_property(type ${target} TYPE)
      if(type STREQUAL "STATIC_LIBRARY")
        set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE 8)
      endif()
    endforeach()
  endforeach()
endfunction()

# strata_test(<name> [POSTGRES] SOURCES ... LIBS ...): one GoogleTest
# binary, registered with ctest one suite at a time (TestSuites.cmake).
# POSTGRES: its tests share the throwaway PostgreSQL that the ctest fixture
# `postgres` (tests/CMakeLists.txt) starts once per run, found through
# STRATA_TEST_POSTGRES_URL_FILE (src/postgres/postgres_testing.h).
set(STRATA_TEST_POSTGRES_DIR "${PROJECT_BINARY_DIR}/test-postgres")
function(strata_test name)
  cmake_parse_arguments(ARG "POSTGRES" "" "SOURCES;LIBS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  strata_target(${name})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} GTest::gtest GTest::gmock GTest::gtest_main)
  if(STRATA_QUICK_BUILD)
    # The test binary's own sources, not the libraries they test: the
    # sanitizer presets' -O1 is for the code under test, while a test's
    # assertions and fixtures build about 40% faster without optimisation.
    target_compile_options(${name} PRIVATE -O0)
    target_precompile_headers(${name} PRIVATE <gmock/gmock.h> <gtest/gtest.h>)
  endif()
  if(ARG_POSTGRES)
    strata_add_test_suites(${name}
      ENVIRONMENT "TEST_SOURCE_DIR=${PROJECT_SOURCE_DIR}"
        "STRATA_TEST_POSTGRES_URL_FILE=${STRATA_TEST_POSTGRES_DIR}/url"
      FIXTURES postgres)
  else()
    strata_add_test_suites(${name} ENVIRONMENT "TEST_SOURCE_DIR=${PROJECT_SOURCE_DIR}")
  endif()
endfunction()
