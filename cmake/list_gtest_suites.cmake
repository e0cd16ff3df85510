# Run by strata_test's POST_BUILD step (cmake/TestSuites.cmake) with
# -D TEST_EXECUTABLE=... -D CTEST_FILE=... -D PROPERTIES_FILE=...: lists
# the binary's GoogleTest suites and writes CTEST_FILE, which registers one
# ctest test per suite (`--gtest_filter=<suite>.*`), named after the suite,
# with the properties PROPERTIES_FILE sets (TEST_WORKING_DIRECTORY,
# TEST_ENVIRONMENT, TEST_FIXTURES).
include("${PROPERTIES_FILE}")
execute_process(COMMAND "${TEST_EXECUTABLE}" --gtest_list_tests
  OUTPUT_VARIABLE listing ERROR_VARIABLE errors RESULT_VARIABLE result TIMEOUT 60)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "${TEST_EXECUTABLE} --gtest_list_tests failed (${result}):\n${listing}${errors}")
endif()
string(REPLACE "\n" ";" lines "${listing}")
set(script "")
set(suites 0)
foreach(line IN LISTS lines)
  # A suite's line is its name and a dot, then for typed and parameterised
  # suites a comment; its tests' lines are indented.
  if(line MATCHES "^([A-Za-z_][A-Za-z0-9_/]*)\\.(  #.*)?$")
    set(suite "${CMAKE_MATCH_1}")
    math(EXPR suites "${suites} + 1")
    string(APPEND script
      "add_test([=[${suite}]=] [=[${TEST_EXECUTABLE}]=] [=[--gtest_filter=${suite}.*]=])\n"
      "set_tests_properties([=[${suite}]=] PROPERTIES WORKING_DIRECTORY [=[${TEST_WORKING_DIRECTORY}]=]"
      " ENVIRONMENT [=[${TEST_ENVIRONMENT}]=]")
    if(TEST_FIXTURES)
      string(APPEND script " FIXTURES_REQUIRED [=[${TEST_FIXTURES}]=]")
    endif()
    string(APPEND script ")\n")
  endif()
endforeach()
if(suites EQUAL 0)
  message(FATAL_ERROR "${TEST_EXECUTABLE} lists no test suite:\n${listing}")
endif()
file(WRITE "${CTEST_FILE}" "${script}")
