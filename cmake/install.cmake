# Installation and the files other projects use to find aloe:
#   <prefix>/include/aloe/...                   public headers (the whole tree)
#   <libdir>/libaloe.so*, libaloe.a              shared and static library
#   <libdir>/cmake/aloe/aloeConfig*.cmake        find_package(aloe) -> aloe::aloe, aloe::aloe_static
#   <libdir>/pkgconfig/aloe.pc                   pkg-config --cflags --libs aloe
#   <bindir>/aloe                                the CLI (tools/aloe), when that target exists
#   <libexecdir>/aloe/apps, <datadir>/aloe/       the benchmark workloads, harness and matrices
# Included at the end of the top-level CMakeLists.txt, after every target is defined.
include(CMakePackageConfigHelpers)

set(ALOE_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/aloe"
    CACHE STRING "Where aloeConfig.cmake is installed, relative to the prefix")
set(ALOE_INSTALL_PKGCONFIGDIR "${CMAKE_INSTALL_LIBDIR}/pkgconfig"
    CACHE STRING "Where aloe.pc is installed, relative to the prefix")

install(DIRECTORY include/aloe
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.h" PATTERN "*.hpp")

install(TARGETS aloe aloe_static
        EXPORT aloeTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

# aloe::aloe_static's link interface names $<LINK_ONLY:PkgConfig::HWLOC> (it links hwloc
# privately, and a static library's private dependencies travel with it). aloeConfig.cmake
# re-creates that imported target before it loads aloeTargets.cmake.
install(EXPORT aloeTargets
        NAMESPACE aloe::
        DESTINATION ${ALOE_INSTALL_CMAKEDIR}
        FILE aloeTargets.cmake)

configure_package_config_file(
  ${CMAKE_CURRENT_LIST_DIR}/aloeConfig.cmake.in
  ${PROJECT_BINARY_DIR}/aloeConfig.cmake
  INSTALL_DESTINATION ${ALOE_INSTALL_CMAKEDIR})
write_basic_package_version_file(
  ${PROJECT_BINARY_DIR}/aloeConfigVersion.cmake
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/aloeConfig.cmake ${PROJECT_BINARY_DIR}/aloeConfigVersion.cmake
        DESTINATION ${ALOE_INSTALL_CMAKEDIR})

# aloe.pc finds its prefix relative to its own folder (${pcfiledir}), so the installed tree
# stays correct under `cmake --install --prefix`, DESTDIR, or when moved.
if(IS_ABSOLUTE "${ALOE_INSTALL_PKGCONFIGDIR}")
  set(ALOE_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
else()
  file(RELATIVE_PATH _aloe_pc_up "/prefix/${ALOE_INSTALL_PKGCONFIGDIR}" "/prefix")
  string(REGEX REPLACE "/$" "" _aloe_pc_up "${_aloe_pc_up}")
  set(ALOE_PC_PREFIX "\${pcfiledir}/${_aloe_pc_up}")
endif()
foreach(_aloe_dir LIBDIR INCLUDEDIR)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${_aloe_dir}}")
    set(ALOE_PC_${_aloe_dir} "${CMAKE_INSTALL_${_aloe_dir}}")
  else()
    set(ALOE_PC_${_aloe_dir} "\${prefix}/${CMAKE_INSTALL_${_aloe_dir}}")
  endif()
endforeach()
configure_file(${CMAKE_CURRENT_LIST_DIR}/aloe.pc.in ${PROJECT_BINARY_DIR}/aloe.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/aloe.pc DESTINATION ${ALOE_INSTALL_PKGCONFIGDIR})

# The CLI, named `aloe`. Its RPATH finds the installed libaloe.so from any prefix.
if(TARGET aloe_cli)
  set_target_properties(aloe_cli PROPERTIES INSTALL_RPATH "$ORIGIN/../${CMAKE_INSTALL_LIBDIR}")
  install(TARGETS aloe_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()

# The benchmark harness: workloads under <libexecdir>/aloe/apps (installed by
# apps/CMakeLists.txt), the Python driver and the matrices under <datadir>/aloe, where
# `aloe bench` looks for them relative to its own binary.
install(DIRECTORY bench/harness/aloe_harness
        DESTINATION ${CMAKE_INSTALL_DATADIR}/aloe/harness
        FILES_MATCHING PATTERN "*.py")
install(DIRECTORY bench/matrices
        DESTINATION ${CMAKE_INSTALL_DATADIR}/aloe
        FILES_MATCHING PATTERN "*.toml")
