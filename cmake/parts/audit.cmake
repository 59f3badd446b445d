# audit: sources and tests (see the components section of CMakeLists.txt).
# Exact discrete samplers and the discrete (floating-point-safe) noise of the
# mechanisms; empirical privacy audits (docs/audits.md).
target_sources(dpem PRIVATE
  src/random/discrete_samplers.cc
  src/mechanisms/discrete_noise.cc)
if(DPEM_BUILD_TESTS)
  target_sources(dpem_testing PRIVATE src/testing/audit.cc)
  target_link_libraries(dpem_testing PUBLIC dpem::dpem)
  dpem_add_test(discrete_samplers_test SOURCES src/random/discrete_samplers_test.cc)
  dpem_add_test(discrete_samplers_statistical_test
    SOURCES src/random/discrete_samplers_statistical_test.cc LABELS statistical)
  dpem_add_test(audit_harness_test SOURCES tests/audit/audit_harness_test.cc)
  dpem_add_test(mechanisms_audit_test SOURCES src/mechanisms/mechanisms_audit_test.cc LABELS audit)
endif()
if(DPEM_BUILD_BENCHMARKS)
  target_sources(dpem_benchmarks PRIVATE benchmarks/discrete_samplers_benchmark.cc)
endif()
if(DPEM_BUILD_TESTS)
  dpem_add_test(private_gmm_audit_test SOURCES src/models/gmm/private_gmm_audit_test.cc LABELS audit)
endif()
if(DPEM_BUILD_TESTS)
  dpem_add_test(private_start_audit_test SOURCES src/models/start/private_start_audit_test.cc
    LABELS audit)
endif()
