# gradient_em: sources and tests (see the components section of CMakeLists.txt).
# wang-dp-gradient-em: the robust private mean estimator, DP gradient EM for
# the GMM, MRM and RMC models, their data generators, and the CLI commands
# `dpem generate` and `dpem fit gradient-em` (tools/gradient_em_command.cc,
# already listed in dpem_cli), whose model files `dpem score` reads. Docs:
# docs/gradient_em.md.
dpem_add_sources(dpem src/mechanisms robust_mean)
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
