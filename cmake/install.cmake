# Install rules (option BSVD_INSTALL; docs/install.md). Under the prefix:
#   include/bsvd/bsvd.h, blas.h, svd.hpp, hsvd.hpp     the C and C++ API
#   lib/libbsvd.a                                      static library
#   lib/libbsvd.so.<version>, .so.<soversion>, .so     shared (BSVD_BUILD_SHARED)
#   lib/cmake/bsvd/                                    find_package(bsvd CONFIG):
#       bsvd::bsvd (static), bsvd::bsvd_shared, bsvd_WITH_CUDA
#   lib/pkgconfig/bsvd.pc                              pkg-config --cflags --libs bsvd
#   bin/bsvd                                           the CLI (BSVD_BUILD_TOOLS)
# (lib is CMAKE_INSTALL_LIBDIR: lib/x86_64-linux-gnu for prefix /usr on
# Debian.) Components: runtime (shared library, CLI) and devel (the rest),
# e.g. cmake --install build --prefix /opt/bsvd --component runtime.
include(CMakePackageConfigHelpers)
set(BSVD_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/bsvd)

install(DIRECTORY include/bsvd DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT devel
        FILES_MATCHING PATTERN "*.h" PATTERN "*.hpp" PATTERN "*.cuh")
install(TARGETS ${BSVD_LIBRARIES} EXPORT bsvdTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT devel
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT runtime NAMELINK_COMPONENT devel
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT runtime
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
if(BSVD_BUILD_TOOLS)
  # RUNPATH to the non-system libraries it links (CUDA, BSVD_DEPS_ROOT).
  set_target_properties(bsvd_cli PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)
  install(TARGETS bsvd_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT runtime)
endif()

# ---- CMake package -----------------------------------------------------------
install(EXPORT bsvdTargets NAMESPACE bsvd:: DESTINATION ${BSVD_CMAKE_DIR} COMPONENT devel)
set(BSVD_CUDA_ROOT "")
if(BSVD_LIB_HAVE_CUDA)
  # The toolkit built against: the package's default for find_dependency.
  get_filename_component(BSVD_CUDA_ROOT "${CUDAToolkit_BIN_DIR}" DIRECTORY)
endif()
configure_package_config_file(cmake/bsvdConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/bsvdConfig.cmake INSTALL_DESTINATION ${BSVD_CMAKE_DIR})
# 0.x: a minor version may break the API, so only the same minor matches.
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/bsvdConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/bsvdConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/bsvdConfigVersion.cmake
        DESTINATION ${BSVD_CMAKE_DIR} COMPONENT devel)

# ---- pkg-config --------------------------------------------------------------
# Two stages: the build's facts now, the prefix at install time (the one
# cmake --install --prefix gives), so that the paths in bsvd.pc are those
# of the installed files.
# What libbsvd.a needs besides itself. -lbsvd finds libbsvd.so when it is
# installed (it records these itself): then they are for pkg-config --static
# only; in a static-only install every link needs them.
set(BSVD_PC_DEPS "-lstdc++ -lm ${CMAKE_THREAD_LIBS_INIT}")
if(BSVD_LIB_HAVE_CUDA)
  string(PREPEND BSVD_PC_DEPS "-L${CUDAToolkit_LIBRARY_DIR} -lcudart -lcublas -lcusolver ")
endif()
# The cpu backend's LAPACK path: the libraries found at configure time.
foreach(l IN LISTS BSVD_LAPACK_LIBS)
  get_filename_component(d "${l}" DIRECTORY)
  get_filename_component(n "${l}" NAME_WE)
  string(REGEX REPLACE "^lib" "" n "${n}")
  string(PREPEND BSVD_PC_DEPS "-L${d} -l${n} ")
endforeach()
string(STRIP "${BSVD_PC_DEPS}" BSVD_PC_DEPS)
if(BSVD_BUILD_SHARED)
  set(BSVD_PC_LIBS "")
  set(BSVD_PC_LIBS_PRIVATE "${BSVD_PC_DEPS}")
else()
  set(BSVD_PC_LIBS " ${BSVD_PC_DEPS}")
  set(BSVD_PC_LIBS_PRIVATE "")
endif()
foreach(d LIBDIR INCLUDEDIR)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${d}}")
    set(BSVD_PC_${d} "${CMAKE_INSTALL_${d}}")
  else()
    set(BSVD_PC_${d} "\${prefix}/${CMAKE_INSTALL_${d}}")
  endif()
endforeach()
set(BSVD_PC_PREFIX "@CMAKE_INSTALL_PREFIX@") # filled in by the install step
configure_file(cmake/bsvd.pc.in ${CMAKE_CURRENT_BINARY_DIR}/bsvd.pc.stage @ONLY)
install(CODE "configure_file(\"${CMAKE_CURRENT_BINARY_DIR}/bsvd.pc.stage\"
                             \"${CMAKE_CURRENT_BINARY_DIR}/pkgconfig/bsvd.pc\" @ONLY)"
        COMPONENT devel)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/pkgconfig/bsvd.pc
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT devel)
