# kmeans: sources and tests (see the components section of CMakeLists.txt).
dpem_add_sources(dpem src/models/kmeans kmeans kmeans_fit kmeans_options kmeans_release_plan
                 kmeans_model_io)
# tools/fit_kmeans_command.cc is already a dpem_cli source in CMakeLists.txt.
if(DPEM_BUILD_TESTS)
  dpem_add_tests(src/models/kmeans kmeans_test kmeans_fit_test)
  dpem_add_tests(src/models/kmeans kmeans_statistical_test LABELS statistical)
  dpem_add_cli_tests(kmeans_cli_test)
endif()
