# mpi: the MPI backend (docs/distributed.md): dpem::dpem_mpi (the Collective
# over MPI_COMM_WORLD) and the dpem-mpi CLI, built with DPEM_WITH_MPI (Open
# MPI from Debian: libopenmpi-dev, openmpi-bin). Its CLI tests run
# `mpirun --oversubscribe -np P` (label mpi).
if(NOT DPEM_WITH_MPI)
  return()
endif()
enable_language(C)  # FindMPI needs it for the C API (mpi.h; no C++ bindings).
find_package(MPI REQUIRED COMPONENTS C)
add_library(dpem_mpi src/engine/mpi_collective.cc)
add_library(dpem::dpem_mpi ALIAS dpem_mpi)
target_link_libraries(dpem_mpi PUBLIC dpem::dpem PRIVATE MPI::MPI_C)
# mpi.h in C++ would pull in the deprecated C++ bindings (libmpi_cxx).
target_compile_definitions(dpem_mpi PRIVATE OMPI_SKIP_MPICXX MPICH_SKIP_MPICXX)
target_compile_options(dpem_mpi PRIVATE ${DPEM_WARNING_FLAGS})
set_target_properties(dpem_mpi PROPERTIES POSITION_INDEPENDENT_CODE ON)
# find_package(dpem COMPONENTS mpi) (cmake/dpemConfig.cmake.in): an export of
# its own, so that a project without MPI never needs it.
install(TARGETS dpem_mpi EXPORT dpemMpiTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(EXPORT dpemMpiTargets NAMESPACE dpem:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/dpem)
if(DPEM_BUILD_CLI)
  add_executable(dpem_mpi_cli tools/dpem_mpi_main.cc)
  set_target_properties(dpem_mpi_cli PROPERTIES OUTPUT_NAME dpem-mpi
                        RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR})
  target_link_libraries(dpem_mpi_cli PRIVATE dpem_cli_objects dpem::dpem_mpi)
  target_compile_options(dpem_mpi_cli PRIVATE ${DPEM_WARNING_FLAGS})
  install(TARGETS dpem_mpi_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
# The launcher (tools/dpem-mpirun), beside the binaries in the build tree
# and installed with them.
configure_file(tools/dpem-mpirun ${PROJECT_BINARY_DIR}/dpem-mpirun COPYONLY)
install(PROGRAMS tools/dpem-mpirun DESTINATION ${CMAKE_INSTALL_BINDIR})
if(DPEM_BUILD_TESTS AND DPEM_BUILD_CLI)
  # The library's distributed path is tested without MPI (ranks as threads:
  # src/pipeline/distributed_fit_test.cc); this runs the real thing.
  find_program(DPEM_SYSTEM_PYTHON NAMES python3 PATHS /usr/bin NO_DEFAULT_PATH REQUIRED)
  add_test(NAME mpi_cli
    COMMAND ${DPEM_SYSTEM_PYTHON} ${PROJECT_SOURCE_DIR}/tests/mpi/mpi_cli_test.py ${PROJECT_BINARY_DIR})
  set_tests_properties(mpi_cli PROPERTIES LABELS mpi TIMEOUT 600)
endif()
