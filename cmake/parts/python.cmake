# python: the Python package dpem (docs/python.md), built when
# DPEM_BUILD_PYTHON is ON: the extension dpem._core (pybind11, from Debian's
# pybind11-dev; python/src/*.cc) over the library, and the pure-Python
# estimators (python/dpem/*.py), assembled in build/python/dpem so that
# PYTHONPATH=build/python imports the package of this build.
#
# `cmake --install build --component python` copies the package into
# DPEM_PYTHON_INSTALL_DIR under the install prefix (by default
# /usr/local/lib/python3.X/dist-packages, on the path of Debian's
# /usr/bin/python3): scripts/setup.sh does this, so that `import dpem` works
# in any shell, independently of the build tree (rebuild and re-install to
# update it).
if(NOT DPEM_BUILD_PYTHON)
  return()
endif()

# Debian's interpreter, whose numpy, scipy, scikit-learn and pandas the
# package uses; not whatever `python3` is first on PATH.
set(DPEM_PYTHON_EXECUTABLE /usr/bin/python3 CACHE FILEPATH
    "The Python interpreter the package is built for")
set(Python_EXECUTABLE ${DPEM_PYTHON_EXECUTABLE})
find_package(Python 3.9 REQUIRED COMPONENTS Interpreter Development.Module)
find_package(pybind11 2.6 CONFIG REQUIRED)

set(DPEM_PYTHON_INSTALL_DIR
    "lib/python${Python_VERSION_MAJOR}.${Python_VERSION_MINOR}/dist-packages" CACHE STRING
    "Where `cmake --install --component python` puts the package, relative to the prefix")
set(dpem_python_dir ${PROJECT_BINARY_DIR}/python/dpem)

# NO_EXTRAS: no link-time optimisation or stripping, so that the module
# builds like the rest of dpem (and quickly on small machines).
pybind11_add_module(dpem_python MODULE NO_EXTRAS
  python/src/module.cc
  python/src/common.cc
  python/src/gmm_bindings.cc
  python/src/kmeans_bindings.cc
  python/src/fa_bindings.cc
  python/src/gradient_em_bindings.cc
  python/src/budget_bindings.cc
  python/src/accounting_bindings.cc)
set_target_properties(dpem_python PROPERTIES OUTPUT_NAME _core
                      LIBRARY_OUTPUT_DIRECTORY ${dpem_python_dir})
target_link_libraries(dpem_python PRIVATE dpem::dpem nlohmann_json::nlohmann_json)
target_compile_options(dpem_python PRIVATE ${DPEM_WARNING_FLAGS})

# The pure-Python modules, copied next to the extension at build time.
file(GLOB dpem_python_sources CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/python/dpem/*.py)
set(dpem_python_copies)
foreach(source ${dpem_python_sources})
  get_filename_component(name ${source} NAME)
  add_custom_command(OUTPUT ${dpem_python_dir}/${name}
    COMMAND ${CMAKE_COMMAND} -E copy_if_different ${source} ${dpem_python_dir}/${name}
    DEPENDS ${source} COMMENT "Copying python/dpem/${name}")
  list(APPEND dpem_python_copies ${dpem_python_dir}/${name})
endforeach()
add_custom_target(dpem_python_package ALL DEPENDS ${dpem_python_copies})
add_dependencies(dpem_python dpem_python_package)

install(TARGETS dpem_python LIBRARY DESTINATION ${DPEM_PYTHON_INSTALL_DIR}/dpem
        COMPONENT python)
install(FILES ${dpem_python_sources} DESTINATION ${DPEM_PYTHON_INSTALL_DIR}/dpem
        COMPONENT python)

# The pytest suite (python/tests), against this build's package and CLI.
if(DPEM_BUILD_TESTS)
  add_test(NAME python_pytest
    COMMAND ${Python_EXECUTABLE} -m pytest -q -p no:cacheprovider ${PROJECT_SOURCE_DIR}/python/tests)
  set(dpem_python_test_env
      "PYTHONPATH=${PROJECT_BINARY_DIR}/python" "PYTHONDONTWRITEBYTECODE=1")
  if(DPEM_BUILD_CLI)
    list(APPEND dpem_python_test_env "DPEM_CLI=$<TARGET_FILE:dpem_cli>")
  endif()
  set_tests_properties(python_pytest PROPERTIES LABELS python TIMEOUT 900
                       ENVIRONMENT "${dpem_python_test_env}")
endif()
