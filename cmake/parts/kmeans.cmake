# kmeans: sources and tests (see the components section of CMakeLists.txt).
target_sources(dpem PRIVATE
  src/models/kmeans/kmeans.cc
  src/models/kmeans/kmeans_fit.cc
  src/models/kmeans/kmeans_options.cc
  src/models/kmeans/kmeans_release_plan.cc
  src/models/kmeans/kmeans_model_io.cc
  src/models/kmeans/kmeans_fit_task.cc)
# tools/fit_kmeans_command.cc is already a dpem_cli source in CMakeLists.txt.
if(DPEM_BUILD_TESTS)
  dpem_add_test(kmeans_test SOURCES src/models/kmeans/kmeans_test.cc)
  dpem_add_test(kmeans_fit_test SOURCES src/models/kmeans/kmeans_fit_test.cc)
  dpem_add_test(kmeans_statistical_test
    SOURCES src/models/kmeans/kmeans_statistical_test.cc LABELS statistical)
  dpem_add_cli_test(kmeans_cli_test SOURCES tests/cli/kmeans_cli_test.cc)
endif()
