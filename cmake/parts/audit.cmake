# audit: sources and tests (see the components section of CMakeLists.txt).
# Exact discrete samplers and the discrete (floating-point-safe) noise of the
# mechanisms; empirical privacy audits (docs/audits.md).
dpem_add_sources(dpem src/random discrete_samplers)
dpem_add_sources(dpem src/mechanisms discrete_noise)
if(DPEM_BUILD_TESTS)
  target_sources(dpem_testing PRIVATE src/testing/audit.cc)
  target_link_libraries(dpem_testing PUBLIC dpem::dpem)
  dpem_add_tests(src/random discrete_samplers_test)
  dpem_add_tests(src/random discrete_samplers_statistical_test LABELS statistical)
  # The real discrete_samplers.cc against a scripted Generator (not the
  # library's), driven through every outcome of its draws: not linked with dpem.
  add_executable(discrete_samplers_exhaustive_test src/random/discrete_samplers_exhaustive_test.cc)
  target_include_directories(discrete_samplers_exhaustive_test BEFORE PRIVATE
                             ${PROJECT_SOURCE_DIR}/src/random/testing/scripted_generator)
  target_include_directories(discrete_samplers_exhaustive_test PRIVATE
                             ${PROJECT_SOURCE_DIR}/include ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(discrete_samplers_exhaustive_test PRIVATE GTest::gtest
                        GTest::gtest_main)
  gtest_discover_tests(discrete_samplers_exhaustive_test PROPERTIES LABELS unit DISCOVERY_TIMEOUT 60)
  dpem_add_tests(tests/audit audit_harness_test)
  dpem_add_tests(src/mechanisms mechanisms_audit_test LABELS audit)
endif()
if(DPEM_BUILD_BENCHMARKS)
  target_sources(dpem_benchmarks PRIVATE benchmarks/discrete_samplers_benchmark.cc)
endif()
if(DPEM_BUILD_TESTS)
  dpem_add_tests(src/models/gmm private_gmm_audit_test LABELS audit)
endif()
if(DPEM_BUILD_TESTS)
  dpem_add_tests(src/models/start private_start_audit_test LABELS audit)
endif()
