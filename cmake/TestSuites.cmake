# strata_add_test_suites(<target> ENVIRONMENT <var=value>... [FIXTURES <name>...]):
# registers each GoogleTest suite of <target> as one ctest test, named
# after the suite and run as `<target> --gtest_filter=<suite>.*`.
#
# One process per suite, not per test (gtest_discover_tests' way): a
# suite's tests share its fixtures' SetUpTestSuite (the API suites build a
# storage engine and load it once) and the process start, which under
# ASan costs 0.3 to 0.8 s for the larger binaries. The suites are listed
# after each link (cmake/list_gtest_suites.cmake), so a new suite needs no
# CMake change. `ctest -R <suite>` runs a suite; one test of it:
# `<binary> --gtest_filter=<suite>.<test>`.
function(strata_add_test_suites target)
  cmake_parse_arguments(ARG "" "" "ENVIRONMENT;FIXTURES" ${ARGN})
  set(base "${CMAKE_CURRENT_BINARY_DIR}/${target}")
  file(WRITE "${base}_suite_properties.cmake"
    "set(TEST_WORKING_DIRECTORY [=[${CMAKE_CURRENT_BINARY_DIR}]=])\n"
    "set(TEST_ENVIRONMENT [=[${ARG_ENVIRONMENT}]=])\n"
    "set(TEST_FIXTURES [=[${ARG_FIXTURES}]=])\n")
  add_custom_command(TARGET ${target} POST_BUILD
    COMMAND "${CMAKE_COMMAND}" -D "TEST_EXECUTABLE=$<TARGET_FILE:${target}>"
      -D "CTEST_FILE=${base}_suites.cmake" -D "PROPERTIES_FILE=${base}_suite_properties.cmake"
      -P "${PROJECT_SOURCE_DIR}/cmake/list_gtest_suites.cmake"
    BYPRODUCTS "${base}_suites.cmake"
    VERBATIM)
  file(WRITE "${base}_suites_include.cmake"
    "if(EXISTS [=[${base}_suites.cmake]=])\n"
    "  include([=[${base}_suites.cmake]=])\n"
    "else()\n"
    "  add_test([=[${target}_NOT_BUILT]=] [=[${target}_NOT_BUILT]=])\n"
    "endif()\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES "${base}_suites_include.cmake")
endfunction()
