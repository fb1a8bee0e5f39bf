# One compile-fail snippet: SRC compiles as it is (so the mistake, not something else, is what
# fails) and fails with -DGRAFT_FAIL, the output matching its `// EXPECT: <regex>` line.
# cmake -DCXX=g++ -DSRC=fail/x.cpp -DINCLUDE=include -P check.cmake
file(STRINGS ${SRC} expect_line REGEX "^// EXPECT: ")
if(NOT expect_line)
  message(FATAL_ERROR "${SRC}: no `// EXPECT: <regex>` line")
endif()
string(REGEX REPLACE "^// EXPECT: " "" expect "${expect_line}")
set(flags -std=c++20 -fsyntax-only -I${INCLUDE})

execute_process(COMMAND ${CXX} ${flags} ${SRC} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${SRC}: the correct variant (without GRAFT_FAIL) does not compile:\n${out}")
endif()

execute_process(COMMAND ${CXX} ${flags} -DGRAFT_FAIL ${SRC} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(rc EQUAL 0)
  message(FATAL_ERROR "${SRC}: compiles with -DGRAFT_FAIL; the mistake must be a compile error")
endif()
if(NOT out MATCHES "${expect}")
  message(FATAL_ERROR "${SRC}: the compiler's message does not match `${expect}`:\n${out}")
endif()
message(STATUS "${SRC}: fails as expected (matches `${expect}`)")
