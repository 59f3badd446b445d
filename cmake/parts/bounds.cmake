# bounds: a public domain released privately from the data (docs/bounds.md).
target_sources(dpem PRIVATE src/data/private_bounds.cc)
if(DPEM_BUILD_CLI)
  target_sources(dpem_cli PRIVATE tools/bounds_command.cc)
endif()
if(DPEM_BUILD_TESTS)
  dpem_add_test(private_bounds_test SOURCES src/data/private_bounds_test.cc)
  dpem_add_test(private_bounds_audit_test SOURCES src/data/private_bounds_audit_test.cc
    LABELS audit)
  dpem_add_cli_test(bounds_cli_test SOURCES tests/cli/bounds_cli_test.cc)
endif()
