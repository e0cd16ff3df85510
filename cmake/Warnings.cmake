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

# strata_test(<name> SOURCES ... LIBS ...): one GoogleTest binary, registered with ctest.
function(strata_test name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  strata_target(${name})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} GTest::gtest GTest::gmock GTest::gtest_main)
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60
    PROPERTIES ENVIRONMENT "TEST_SOURCE_DIR=${PROJECT_SOURCE_DIR};TEST_BUILD_DIR=${PROJECT_BINARY_DIR}")
endfunction()
