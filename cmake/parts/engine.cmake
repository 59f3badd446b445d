# engine: the threaded block engine (src/engine) and the data sources it
# reads; the library sources are listed in CMakeLists.txt.
if(DPEM_BUILD_TESTS)
  dpem_add_tests(src/engine engine_test exact_sum_test)
  if(OpenMP_CXX_FOUND)  # The test limits OpenMP's team size.
    target_link_libraries(engine_test PRIVATE OpenMP::OpenMP_CXX)
  endif()
  dpem_add_tests(src/data row_source_test)
endif()
if(DPEM_BUILD_BENCHMARKS)
  target_sources(dpem_benchmarks PRIVATE benchmarks/gmm_engine_benchmark.cc)
  # The private pass in component frames is internal (src/models/gmm/gmm_frames.h).
  target_include_directories(dpem_benchmarks PRIVATE ${PROJECT_SOURCE_DIR}/src)
  # The machine's dgemm rate, from OpenBLAS (all cores).
  find_package(PkgConfig REQUIRED)
  pkg_check_modules(DPEM_OPENBLAS REQUIRED IMPORTED_TARGET openblas)
  target_link_libraries(dpem_benchmarks PRIVATE PkgConfig::DPEM_OPENBLAS)
endif()
