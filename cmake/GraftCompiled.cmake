# graft::compiled — graft's compiled part (GRAFT_SEPARATE_COMPILATION; core/config.hpp lists what it
# holds): the CPU kernel table, the op table, the gradient rules, the session's planner and run(),
# gradients(), clone_into(), import_meta_graph(), the saver, the typed runtime and the file-format
# codecs (src/compiled, src/formats), plus the C++ protoc generates from proto/graft_tf/*.proto
# (graft's own package `graft.tf`, wire-compatible with TensorFlow's field numbers; the text format
# only) and snappy. Its earlier name graft::tf stays as an alias (and in the installed package).
find_package(Protobuf REQUIRED)
find_package(Snappy CONFIG QUIET)
if(NOT TARGET Snappy::snappy)
  find_library(GRAFT_SNAPPY_LIB snappy REQUIRED)
  add_library(Snappy::snappy UNKNOWN IMPORTED)
  set_target_properties(Snappy::snappy PROPERTIES IMPORTED_LOCATION ${GRAFT_SNAPPY_LIB})
endif()

file(GLOB GRAFT_PROTO_FILES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/proto/graft_tf/*.proto)
# src/compiled: the compiled parts and the CPU kernel table; src/formats: the file-format codecs (byte-level
# TF formats in tf/, GraphDef / MetaGraph / SavedModel in tf_graph/), as include/graft/formats/.
file(GLOB GRAFT_COMPILED_SOURCES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/compiled/*.cpp
  ${PROJECT_SOURCE_DIR}/src/formats/tf/*.cpp ${PROJECT_SOURCE_DIR}/src/formats/tf_graph/*.cpp)
# The sanitizer build (make asan) leaves out the typed tests, and nothing else it builds calls the
# typed runtime: there graft::compiled is built without it (~80 s of that build's compile time).
if(GRAFT_SANITIZE)
  list(REMOVE_ITEM GRAFT_COMPILED_SOURCES ${PROJECT_SOURCE_DIR}/src/compiled/typed_runtime.cpp)
endif()
add_library(graft_compiled STATIC ${GRAFT_COMPILED_SOURCES})
if(GRAFT_FUZZ)
  # The graph codecs are compiled here, not in the fuzz targets' own files: give them libFuzzer's
  # coverage instrumentation too (the sanitizer runtime supplies its callbacks in other binaries).
  set_property(SOURCE ${PROJECT_SOURCE_DIR}/src/formats/tf_graph/codec_graph.cpp ${PROJECT_SOURCE_DIR}/src/formats/tf_graph/codec_meta.cpp
    ${PROJECT_SOURCE_DIR}/src/formats/tf_graph/graph_io.cpp APPEND PROPERTY COMPILE_OPTIONS "-fsanitize=fuzzer-no-link")
endif()
add_library(graft::compiled ALIAS graft_compiled)
add_library(graft::tf ALIAS graft_compiled)  # its name before 2026-11 (graftConfig.cmake defines it too)
set_target_properties(graft_compiled PROPERTIES EXPORT_NAME compiled POSITION_INDEPENDENT_CODE ON)
# Optimisation by what a file holds (Release; CI's build budget). Files with no hot loops —
# orchestration, graph building, file formats, control flow, queues — compile at -O1: measured on
# one core of the 2-core CI machine, gradient_rules.cpp 102 s at -O3 vs 44 s at -O1; the typed
# runtime 57 vs 31 s. The tensors they move go through kernels compiled at -O3 in their own files
# (exec_kernels_{core,array,array_more,elementwise,math_more,nn,nn_more,indexing,image}.cpp keep
# -O3). Linear algebra (Eigen's decompositions, rarely a model's hot path) compiles at -O2:
# 206 s at -O3, 170 s at -O2 (-O1 stops inlining Eigen's expression templates).
set(GRAFT_COMPILED_COLD_SOURCES compiled/typed_runtime compiled/gradient_rules compiled/gradients compiled/clone compiled/import
    compiled/saver compiled/op_table formats/tf_graph/graph_io formats/tf_graph/codec_graph
    formats/tf_graph/codec_meta compiled/exec_kernels compiled/exec_kernels_checkpoint_ops
    compiled/exec_kernels_saver_v1 compiled/exec_kernels_functional compiled/exec_kernels_queue
    compiled/exec_kernels_tensor_array compiled/exec_kernels_summary compiled/exec_kernels_parsing
    compiled/exec_kernels_collective compiled/exec_kernels_clustering)
foreach(_f ${GRAFT_COMPILED_COLD_SOURCES})
  set_property(SOURCE ${PROJECT_SOURCE_DIR}/src/${_f}.cpp APPEND PROPERTY COMPILE_OPTIONS "$<$<CONFIG:Release>:-O1>")
endforeach()
set_property(SOURCE ${PROJECT_SOURCE_DIR}/src/compiled/exec_kernels_linalg.cpp APPEND PROPERTY COMPILE_OPTIONS "$<$<CONFIG:Release>:-O2>")
set(GRAFT_PROTO_OUT ${PROJECT_BINARY_DIR}/proto)
file(MAKE_DIRECTORY ${GRAFT_PROTO_OUT})
# protoc runs with proto/ as its only import root, so every file is known as "graft_tf/<name>.proto"
# and generated code includes "graft_tf/<name>.pb.h". (protobuf_generate would also add the source
# dir as a root, and the same file would then have two names.)
if(GRAFT_PROTO_FILES)
  set(_graft_pb_srcs)
  foreach(_proto ${GRAFT_PROTO_FILES})
    get_filename_component(_name ${_proto} NAME_WE)
    set(_out ${GRAFT_PROTO_OUT}/graft_tf/${_name}.pb.cc ${GRAFT_PROTO_OUT}/graft_tf/${_name}.pb.h)
    add_custom_command(OUTPUT ${_out}
      COMMAND protobuf::protoc --cpp_out=${GRAFT_PROTO_OUT} -I ${PROJECT_SOURCE_DIR}/proto ${_proto}
      DEPENDS ${_proto} protobuf::protoc
      COMMENT "protoc graft_tf/${_name}.proto"
      VERBATIM)
    list(APPEND _graft_pb_srcs ${GRAFT_PROTO_OUT}/graft_tf/${_name}.pb.cc)
  endforeach()
  target_sources(graft_compiled PRIVATE ${_graft_pb_srcs})
  # generated code: protoc's style, not graft's warning set; -O1: graft reads and writes the binary
  # formats with its own codec, libprotobuf's generated code serves the text format only
  # (121 s of -O3 compile time across the 22 files)
  set_source_files_properties(${_graft_pb_srcs} PROPERTIES COMPILE_OPTIONS "-w;$<$<CONFIG:Release>:-O1>")
endif()
target_include_directories(graft_compiled PUBLIC
  $<BUILD_INTERFACE:${GRAFT_PROTO_OUT}>
  $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
target_link_libraries(graft_compiled PUBLIC graft protobuf::libprotobuf Snappy::snappy)
# The compiled parts (graft/core/config.hpp lists them: op table, gradient rules, session planner and
# run, gradients, clone, import, saver, typed runtime) come from src/compiled/*.cpp: graft::compiled's users
# see their declarations only.
target_compile_definitions(graft_compiled PUBLIC GRAFT_SEPARATE_COMPILATION)
graft_warnings_for(graft_compiled)
install(DIRECTORY ${GRAFT_PROTO_OUT}/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.pb.h")
set(GRAFT_HAVE_COMPILED 1)
