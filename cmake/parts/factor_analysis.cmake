# factor_analysis: sources and tests (see the components section of CMakeLists.txt).
# LAPACKE (with the system's LAPACK/OpenBLAS) for the top eigenpairs of large
# symmetric matrices (src/internal/eigen_solver.cc). PRIVATE to dpem: an
# installed static dpem needs find_dependency on it in dpemConfig.cmake.
find_package(PkgConfig REQUIRED)
pkg_check_modules(DPEM_LAPACKE REQUIRED IMPORTED_TARGET lapacke)
# Spectra (header-only; Debian libspectra-dev) for the top eigenpairs of large
# symmetric matrices by Lanczos (src/internal/krylov_eigen_solver.cc). Only
# its headers are used, so it is an include path, not a link dependency of an
# installed dpem. Its CMake package, where installed, says where they are.
find_package(spectra 1.0 CONFIG QUIET)
if(TARGET Spectra::Spectra)
  get_target_property(DPEM_SPECTRA_HINT Spectra::Spectra INTERFACE_INCLUDE_DIRECTORIES)
endif()
find_path(DPEM_SPECTRA_INCLUDE_DIR Spectra/SymEigsSolver.h HINTS ${DPEM_SPECTRA_HINT} REQUIRED)
target_include_directories(dpem SYSTEM PRIVATE ${DPEM_SPECTRA_INCLUDE_DIR})
dpem_add_sources(dpem src/internal eigen_solver krylov_eigen_solver randomized_eigen_solver
                 symmetric_product)
dpem_add_sources(dpem src/models/factor_analysis factor_analysis factor_analysis_fit
                 factor_analysis_spectrum fa_model_io)
target_link_libraries(dpem PRIVATE PkgConfig::DPEM_LAPACKE)
if(DPEM_BUILD_TESTS)
  dpem_add_tests(src/internal eigen_solver_test krylov_eigen_solver_test
                 randomized_eigen_solver_test symmetric_product_test)
  dpem_add_tests(src/models/factor_analysis factor_analysis_test factor_analysis_spectrum_test
                 factor_analysis_sklearn_test fa_model_io_test)
  target_compile_definitions(factor_analysis_sklearn_test PRIVATE
    DPEM_SKLEARN_FA_REFERENCE="${PROJECT_SOURCE_DIR}/tests/data/sklearn_fa_reference.json")
  target_link_libraries(factor_analysis_sklearn_test PRIVATE nlohmann_json::nlohmann_json)
  target_link_libraries(fa_model_io_test PRIVATE nlohmann_json::nlohmann_json)
  dpem_add_cli_tests(fa_cli_test)
endif()
if(DPEM_BUILD_BENCHMARKS)
  target_sources(dpem_benchmarks PRIVATE benchmarks/fa_fit_benchmark.cc)
endif()
