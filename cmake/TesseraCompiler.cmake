# Compiler flags, ccache and sanitizers.

find_program(CCACHE_PROGRAM ccache)
if(CCACHE_PROGRAM AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
  # Sloppiness lets ccache cache translation units that use precompiled headers; the base
  # directory makes paths relative, so two clones of the repository (CI's fresh clone, a
  # developer's checkout) share cache entries.
  set(_launcher ${CMAKE_COMMAND} -E env
      "CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime"
      "CCACHE_BASEDIR=${PROJECT_SOURCE_DIR}"
      ${CCACHE_PROGRAM})
  set(CMAKE_C_COMPILER_LAUNCHER ${_launcher})
  set(CMAKE_CXX_COMPILER_LAUNCHER ${_launcher})
  message(STATUS "tessera: using ccache (${CCACHE_PROGRAM})")
endif()

add_compile_options(-Wall -Wextra -Wno-unused-parameter)
if(TESSERA_WERROR)
  add_compile_options(-Werror)
endif()

if(TESSERA_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()

if(TESSERA_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "TESSERA_FUZZ needs clang (use the 'fuzz' preset)")
  endif()
  # Instrument everything for coverage; only fuzz targets link the libFuzzer main.
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
endif()
