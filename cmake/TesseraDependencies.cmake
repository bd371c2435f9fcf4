# Every third-party library comes from a Debian 12 package (scripts/setup installs them).
# All are found here, at the top level, so their imported targets are visible to every system.

find_package(PkgConfig REQUIRED)

# libtorch, plus one precompiled header of <torch/torch.h> that every torch translation unit
# reuses (a plain include costs 35-70 s and 1.3 GB per file on 2 cores). Targets opt in with
# the TORCH keyword of the helpers in TesseraTargets.cmake.
# Torch first: its Caffe2 config and RocksDB's both look for gflags, and only this order
# yields a usable gflags target.
find_package(Torch REQUIRED)
add_library(tessera_torch STATIC ${PROJECT_SOURCE_DIR}/core/torch_pch.cc)
target_link_libraries(tessera_torch PUBLIC ${TORCH_LIBRARIES})
target_precompile_headers(tessera_torch PRIVATE <torch/torch.h>)

find_package(Threads REQUIRED)
find_package(fmt REQUIRED)
find_package(spdlog REQUIRED)
find_package(CLI11 REQUIRED)
find_package(GTest REQUIRED)
find_package(benchmark REQUIRED)
find_package(nlohmann_json REQUIRED)
find_package(OpenSSL REQUIRED)
pkg_check_modules(HTTPLIB REQUIRED IMPORTED_TARGET cpp-httplib)  # PkgConfig::HTTPLIB
# RocksDB::rocksdb is the static archive (8.9 MB per binary); systems link RocksDB::rocksdb-shared.
find_package(RocksDB CONFIG REQUIRED)
find_package(Protobuf REQUIRED)
find_package(gRPC CONFIG REQUIRED)
pkg_check_modules(TOMLPLUSPLUS REQUIRED IMPORTED_TARGET tomlplusplus)
pkg_check_modules(SODIUM REQUIRED IMPORTED_TARGET libsodium)  # Debian ships no CMake config

# The allocator of the long-running daemons (ledger-politician, ledger-citizen, ledger-localnet):
# jemalloc. With glibc's malloc the cost of allocating grew with the heap's age (perf:
# _int_malloc, malloc_consolidate, unlink_chunk, as Merkle-tree nodes and pools churn); on
# jemalloc a 150 s committee-64 run committed 7-24% more (docs/ledger-engine.md, "Session 27").
# Linked first, it replaces malloc for the whole process, shared libraries included. Sanitizer
# and fuzz builds keep their own allocator.
pkg_check_modules(JEMALLOC REQUIRED IMPORTED_TARGET jemalloc)
add_library(tessera_daemon_allocator INTERFACE)
if(NOT TESSERA_SANITIZE AND NOT TESSERA_FUZZ)
  target_link_libraries(tessera_daemon_allocator INTERFACE PkgConfig::JEMALLOC)
endif()

# Generates C++ protobuf and gRPC code for `protos` (paths relative to the current source dir)
# into a static library `name` that links protobuf and gRPC.
function(tessera_grpc_library name)
  cmake_parse_arguments(ARG "" "" "PROTOS" ${ARGN})
  set(srcs)
  foreach(proto IN LISTS ARG_PROTOS)
    get_filename_component(base ${proto} NAME_WE)
    get_filename_component(abs ${proto} ABSOLUTE)
    file(RELATIVE_PATH rel_dir ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_SOURCE_DIR})
    set(out ${PROJECT_BINARY_DIR}/${rel_dir})
    list(APPEND srcs ${out}/${base}.pb.cc ${out}/${base}.grpc.pb.cc)
    add_custom_command(
      OUTPUT ${out}/${base}.pb.cc ${out}/${base}.pb.h ${out}/${base}.grpc.pb.cc ${out}/${base}.grpc.pb.h
      COMMAND protobuf::protoc
        --proto_path=${PROJECT_SOURCE_DIR} --cpp_out=${PROJECT_BINARY_DIR}
        --grpc_out=${PROJECT_BINARY_DIR}
        --plugin=protoc-gen-grpc=$<TARGET_FILE:gRPC::grpc_cpp_plugin>
        ${abs}
      DEPENDS ${abs}
      COMMENT "protoc ${proto}")
  endforeach()
  add_library(${name} STATIC ${srcs})
  target_include_directories(${name} PUBLIC ${PROJECT_BINARY_DIR})
  target_link_libraries(${name} PUBLIC protobuf::libprotobuf gRPC::grpc++)
  # Generated code is not ours to warn about.
  target_compile_options(${name} PRIVATE -w)
endfunction()
