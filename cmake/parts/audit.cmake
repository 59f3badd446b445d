# audit: sources and tests (see the components section of CMakeLists.txt).
# Exact discrete samplers and the discrete (floating-point-safe) noise of the
# mechanisms; empirical privacy audits (docs/audits.md).
target_sources(dpem PRIVATE
  src/random/discrete_samplers.cc
  src/mechanisms/discrete_noise.cc)
if(DPEM_BUILD_TESTS)
  target_sources(dpem_testing PRIVATE src/testing/audit.cc)
  target_link_libraries(dpem_testing PUBLIC dpem::dpem)
  dpem_add_tests(src/random discrete_samplers_test)
  dpem_add_tests(src/random discrete_samplers_statistical_test LABELS statistical)
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
