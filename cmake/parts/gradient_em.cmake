# gradient_em: sources and tests (see the components section of CMakeLists.txt).
