# tether's CMake package under apache-tvm-ffi's name: a project written for
# TVM-FFI (`find_package(tvm_ffi CONFIG REQUIRED)`, then `tvm_ffi::header`,
# `tvm_ffi::shared`, `tvm_ffi_configure_target(...)`) builds against tether
# unmodified. Sources keep including TVM-FFI's own C++ headers
# (`<tvm/ffi/...>`, `<dlpack/dlpack.h>`); tether does not ship them, it
# implements the C ABI they call. The code they compile to links
# libtether_core, the library tether's Python package loads, so objects and
# functions cross between the two through one registry.
#
# TVM-FFI's headers are looked up, first found wins, in
#   1. the CMake variable TETHER_TVM_FFI_INCLUDE_DIR,
#   2. the environment variable TETHER_TVM_FFI_INCLUDE_DIR,
#   3. the apache-tvm-ffi package installed beside tether (same site-packages),
#   4. the apache-tvm-ffi package the Python interpreter CMake uses can import
#      (Python_EXECUTABLE / Python3_EXECUTABLE when the project found one).
# Only the headers of that package are used; its library is never linked.
#
# Result variables, as upstream's package sets them: tvm_ffi_INCLUDE_DIR,
# tvm_ffi_DLPACK_INCLUDE_DIR, tvm_ffi_LIB_FILES; and TETHER_INCLUDE_DIR
# (tether's own headers, also on both targets' include path).

# No cmake_minimum_required here: it would reset the including project's
# policies. LINKER: options (tvm_ffi_hide_static_linked_lib_symbols) need 3.13.
if (CMAKE_VERSION VERSION_LESS 3.13)
  message(FATAL_ERROR "tvm_ffi (tether): CMake 3.13 or newer is needed, this is ${CMAKE_VERSION}")
endif ()

# share/cmake/tvm_ffi -> the tether package directory (libraries, include/).
get_filename_component(_tether_package_dir "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)
get_filename_component(_tether_site_dir "${_tether_package_dir}/.." ABSOLUTE)
set(TETHER_INCLUDE_DIR "${_tether_package_dir}/include")

# A directory holds TVM-FFI's headers when both the C ABI header and the
# DLPack header the C++ headers include are inside it.
function (_tether_is_tvm_ffi_include_dir dir out_var)
  if (dir
      AND EXISTS "${dir}/tvm/ffi/c_api.h"
      AND EXISTS "${dir}/tvm/ffi/function.h"
      AND EXISTS "${dir}/dlpack/dlpack.h"
  )
    set(${out_var}
        TRUE
        PARENT_SCOPE
    )
  else ()
    set(${out_var}
        FALSE
        PARENT_SCOPE
    )
  endif ()
endfunction ()

set(_tether_headers_from "")
if (DEFINED TETHER_TVM_FFI_INCLUDE_DIR AND NOT TETHER_TVM_FFI_INCLUDE_DIR STREQUAL "")
  set(_tether_tvm_ffi_include "${TETHER_TVM_FFI_INCLUDE_DIR}")
  set(_tether_headers_from "the CMake variable TETHER_TVM_FFI_INCLUDE_DIR")
elseif (DEFINED ENV{TETHER_TVM_FFI_INCLUDE_DIR} AND NOT "$ENV{TETHER_TVM_FFI_INCLUDE_DIR}" STREQUAL "")
  set(_tether_tvm_ffi_include "$ENV{TETHER_TVM_FFI_INCLUDE_DIR}")
  set(_tether_headers_from "the environment variable TETHER_TVM_FFI_INCLUDE_DIR")
endif ()

if (_tether_headers_from)
  # An explicit choice is never replaced by a guess: a wrong one is an error.
  get_filename_component(_tether_tvm_ffi_include "${_tether_tvm_ffi_include}" ABSOLUTE)
  _tether_is_tvm_ffi_include_dir("${_tether_tvm_ffi_include}" _tether_ok)
  if (NOT _tether_ok)
    message(
      FATAL_ERROR
        "tvm_ffi (tether): ${_tether_headers_from} is '${_tether_tvm_ffi_include}', which does not "
        "hold TVM-FFI's headers (tvm/ffi/c_api.h, tvm/ffi/function.h and dlpack/dlpack.h). Point it "
        "at the include directory of an installed apache-tvm-ffi (`<site-packages>/tvm_ffi/include`)."
    )
  endif ()
else ()
  # The package's own copy first (the wheel carries the headers of the
  # apache-tvm-ffi release tether implements), then an installed
  # apache-tvm-ffi's.
  set(_tether_candidates "${TETHER_INCLUDE_DIR}" "${_tether_site_dir}/tvm_ffi/include")
  set(_tether_python "")
  if (DEFINED Python_EXECUTABLE)
    set(_tether_python "${Python_EXECUTABLE}")
  elseif (DEFINED Python3_EXECUTABLE)
    set(_tether_python "${Python3_EXECUTABLE}")
  endif ()
  if (_tether_python)
    # PathFinder walks sys.path only, so it finds the installed apache-tvm-ffi
    # even while tether serves as tvm_ffi (its import hook answers first), and
    # nothing is imported.
    execute_process(
      COMMAND
        "${_tether_python}" -c
        "import importlib.machinery as m, os; s = m.PathFinder.find_spec('tvm_ffi'); print(';'.join(os.path.join(p, 'include') for p in ((s.submodule_search_locations or []) if s else [])))"
      OUTPUT_VARIABLE _tether_python_candidates
      OUTPUT_STRIP_TRAILING_WHITESPACE
      ERROR_QUIET
      RESULT_VARIABLE _tether_python_rc
    )
    if (_tether_python_rc EQUAL 0)
      list(APPEND _tether_candidates ${_tether_python_candidates})
    endif ()
  endif ()
  set(_tether_tvm_ffi_include "")
  foreach (_tether_candidate IN LISTS _tether_candidates)
    _tether_is_tvm_ffi_include_dir("${_tether_candidate}" _tether_ok)
    if (_tether_ok)
      get_filename_component(_tether_tvm_ffi_include "${_tether_candidate}" ABSOLUTE)
      break()
    endif ()
  endforeach ()
  if (NOT _tether_tvm_ffi_include)
    message(
      FATAL_ERROR
        "tvm_ffi (tether): TVM-FFI's C++ headers (<tvm/ffi/...>) were not found: this tether package "
        "was built without its copy of them. Set TETHER_TVM_FFI_INCLUDE_DIR (CMake or environment "
        "variable) to a directory holding tvm/ffi/ and dlpack/, or install apache-tvm-ffi==0.1.15.post2 "
        "beside tether (only its headers are used). Looked in: ${_tether_candidates}"
    )
  endif ()
endif ()

if (WIN32)
  set(_tether_core_runtime "${_tether_package_dir}/tether_core.dll")
  set(_tether_core_implib "${_tether_package_dir}/tether_core.dll.lib")
  if (NOT EXISTS "${_tether_core_implib}")
    set(_tether_core_implib "${_tether_package_dir}/tether_core.lib")
  endif ()
  set(_tether_core_link "${_tether_core_implib}")
elseif (APPLE)
  set(_tether_core_runtime "${_tether_package_dir}/libtether_core.dylib")
  set(_tether_core_link "${_tether_core_runtime}")
else ()
  set(_tether_core_runtime "${_tether_package_dir}/libtether_core.so")
  set(_tether_core_link "${_tether_core_runtime}")
endif ()
if (NOT EXISTS "${_tether_core_link}")
  message(
    FATAL_ERROR
      "tvm_ffi (tether): the core library '${_tether_core_link}' is missing; this package directory "
      "is not part of an installed tether (reinstall it: `pip install ./python` in tether's checkout)."
  )
endif ()

set(tvm_ffi_INCLUDE_DIR "${_tether_tvm_ffi_include}")
set(tvm_ffi_DLPACK_INCLUDE_DIR "${_tether_tvm_ffi_include}")
set(tvm_ffi_LIB_FILES "${_tether_core_link}")
message(STATUS "tvm_ffi (tether): libtether_core at ${_tether_core_runtime}")
message(STATUS "tvm_ffi (tether): TVM-FFI headers from ${tvm_ffi_INCLUDE_DIR}")

# A second find_package in the same directory scope reuses the targets.
if (NOT TARGET tvm_ffi::header)
  add_library(tvm_ffi::header INTERFACE IMPORTED)
  set_target_properties(
    tvm_ffi::header
    PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${tvm_ffi_INCLUDE_DIR};${TETHER_INCLUDE_DIR}"
               INTERFACE_COMPILE_FEATURES cxx_std_17
  )
endif ()
if (NOT TARGET tvm_ffi::shared)
  add_library(tvm_ffi::shared SHARED IMPORTED)
  set_target_properties(
    tvm_ffi::shared
    PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${tvm_ffi_INCLUDE_DIR};${TETHER_INCLUDE_DIR}"
               INTERFACE_COMPILE_FEATURES cxx_std_17
  )
  if (WIN32)
    set_target_properties(
      tvm_ffi::shared PROPERTIES IMPORTED_IMPLIB "${_tether_core_implib}" IMPORTED_LOCATION
                                                                       "${_tether_core_runtime}"
    )
  else ()
    set_target_properties(tvm_ffi::shared PROPERTIES IMPORTED_LOCATION "${_tether_core_runtime}")
  endif ()
endif ()

include("${CMAKE_CURRENT_LIST_DIR}/Utils/Library.cmake")
include("${CMAKE_CURRENT_LIST_DIR}/Utils/EmbedCubin.cmake")

set(tvm_ffi_FOUND TRUE)
