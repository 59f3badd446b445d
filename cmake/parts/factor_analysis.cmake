# factor_analysis: sources and tests (see the components section of CMakeLists.txt).
