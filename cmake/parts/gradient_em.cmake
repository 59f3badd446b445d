# gradient_em: sources and tests (see the components section of CMakeLists.txt).
# wang-dp-gradient-em: the robust private mean estimator, DP gradient EM for
# the GMM, MRM and RMC models, their data generators, and the CLI commands
# `dpem generate` and `dpem fit gradient-em` (tools/gradient_em_command.cc,
# already listed in dpem_cli), whose model files `dpem score` reads. Docs:
# docs/gradient_em.md.
dpem_add_sources(dpem src/mechanisms robust_mean robust_mean_kernel)
# The robust mean's kernel (src/mechanisms/robust_mean_kernel.cc) evaluates
# erfc and exp eight values at a time with glibc's vector math library
# (libmvec: erfc since glibc 2.35) where GCC can call it: about 4 times
# faster per value (docs/performance.md). Elsewhere the same loop is scalar.
include(CheckCXXSourceCompiles)
set(CMAKE_REQUIRED_FLAGS "-O2 -fno-math-errno -fopenmp-simd")
set(CMAKE_REQUIRED_LIBRARIES mvec m)
check_cxx_source_compiles([=[
extern "C" __attribute__((simd("notinbranch"))) double erfc(double) noexcept;
double a[8], b[8];
int main() {
#pragma omp simd
  for (int i = 0; i < 8; ++i) b[i] = erfc(a[i]);
  return b[0] > 1.0;
}]=] DPEM_HAVE_LIBMVEC)
unset(CMAKE_REQUIRED_FLAGS)
unset(CMAKE_REQUIRED_LIBRARIES)
if(DPEM_HAVE_LIBMVEC AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  set_source_files_properties(src/mechanisms/robust_mean_kernel.cc PROPERTIES
    COMPILE_OPTIONS "-fno-math-errno;-fopenmp-simd"
    COMPILE_DEFINITIONS DPEM_HAVE_LIBMVEC)
  target_link_libraries(dpem PRIVATE mvec)
endif()
dpem_add_sources(dpem src/models/gradient_em gradient_em gradient_em_models gradient_em_fit_task
                 gradient_em_model_io)
dpem_add_sources(dpem src/data generators)
if(DPEM_BUILD_TESTS)
  dpem_add_tests(src/mechanisms robust_mean_test)
  dpem_add_tests(src/mechanisms robust_mean_statistical_test LABELS statistical)
  dpem_add_tests(src/models/gradient_em gradient_em_gradients_test gradient_em_test
    gradient_em_model_io_test)
  dpem_add_cli_tests(gradient_em_cli_test)
endif()
