# aloe_interposer_library(<target> <output name> SOURCES <sources or object lists…> LIBS <libs…>)
# A library that stands between a program and another runtime (libaloe-gomp before libgomp,
# libaloe-mpi before the MPI library): built into <build>/lib, exporting only what the
# exports.map beside its CMakeLists.txt names, and linked to libaloe.so, found next to it in
# the build tree and installed (DT_RPATH, searched before LD_LIBRARY_PATH: it loads the
# libaloe it was built with, unless the program already loaded one, which libaloe's private
# version node then checks), so a process has one aloe however it was loaded.
function(aloe_interposer_library target output_name)
  cmake_parse_arguments(arg "" "" "SOURCES;LIBS" ${ARGN})
  add_library(${target} SHARED ${arg_SOURCES})
  set(exports ${CMAKE_CURRENT_SOURCE_DIR}/exports.map)
  set_target_properties(${target} PROPERTIES OUTPUT_NAME ${output_name}
    LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/lib LINK_DEPENDS ${exports}
    BUILD_RPATH "$<TARGET_FILE_DIR:aloe>" INSTALL_RPATH "$ORIGIN")
  target_link_libraries(${target} PRIVATE aloe Threads::Threads ${CMAKE_DL_LIBS} ${arg_LIBS})
  target_link_options(${target} PRIVATE "LINKER:--disable-new-dtags" "LINKER:--version-script=${exports}")
  install(TARGETS ${target} LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
endfunction()
