# reliability: sources and tests (see the components section of CMakeLists.txt).
# The privacy-budget ledger (SQLite), the hostile-input corpus (tests/hostile)
# and the libFuzzer targets (fuzz/; -DDPEM_BUILD_FUZZERS=ON, clang++ only).
find_package(SQLite3 REQUIRED)
dpem_add_sources(dpem src/accounting budget_store)
target_include_directories(dpem PRIVATE ${SQLite3_INCLUDE_DIRS})
# By name, so that the exported (static) dpem needs no find_dependency.
target_link_libraries(dpem PRIVATE sqlite3)
if(DPEM_BUILD_CLI)
  target_sources(dpem_cli_objects PRIVATE tools/budget_flags.cc tools/budget_command.cc)
endif()
if(DPEM_BUILD_TESTS)
  dpem_add_tests(src/accounting budget_store_test)
  # Writes a budget file of the first schema directly.
  target_include_directories(budget_store_test PRIVATE ${SQLite3_INCLUDE_DIRS})
  target_link_libraries(budget_store_test PRIVATE sqlite3)
  dpem_add_cli_tests(budget_cli_test hostile_input_test)
  if(TARGET hostile_input_test)
    target_compile_definitions(hostile_input_test PRIVATE
      DPEM_HOSTILE_DIR="${PROJECT_SOURCE_DIR}/tests/hostile")
  endif()
endif()

option(DPEM_BUILD_FUZZERS "Build the libFuzzer targets of fuzz/ (needs clang++)" OFF)
if(DPEM_BUILD_FUZZERS)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "DPEM_BUILD_FUZZERS needs Clang (configure with CXX=clang++); "
                        "the compiler is ${CMAKE_CXX_COMPILER_ID}")
  endif()
  set(DPEM_FUZZ_FLAGS -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined)
  target_compile_options(dpem PRIVATE ${DPEM_FUZZ_FLAGS})
  target_link_options(dpem PUBLIC -fsanitize=address,undefined)
  foreach(target csv_fuzzer npy_fuzzer gmm_model_fuzzer)
    add_executable(${target} fuzz/${target}.cc)
    target_include_directories(${target} PRIVATE ${PROJECT_SOURCE_DIR}/src)
    target_link_libraries(${target} PRIVATE dpem::dpem)
    target_compile_options(${target} PRIVATE -fsanitize=fuzzer,address,undefined
                                             -fno-sanitize-recover=undefined)
    target_link_options(${target} PRIVATE -fsanitize=fuzzer,address,undefined)
  endforeach()
endif()
if(DPEM_BUILD_TESTS)
  # Hostile-but-valid records through every private path (no data-dependent abort).
  dpem_add_tests(src/models private_paths_test)
  # The bounds on R of every model's domain, refused and at their ends.
  dpem_add_tests(src/models data_norm_limits_test)
endif()
