# libev ships no pkg-config file on Debian: find its header and library.
find_path(LIBEV_INCLUDE_DIR NAMES ev.h)
find_library(LIBEV_LIBRARY NAMES ev)
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(Libev DEFAULT_MSG LIBEV_LIBRARY LIBEV_INCLUDE_DIR)
if(Libev_FOUND AND NOT TARGET Libev::Libev)
  add_library(Libev::Libev UNKNOWN IMPORTED)
  set_target_properties(Libev::Libev PROPERTIES
    IMPORTED_LOCATION "${LIBEV_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${LIBEV_INCLUDE_DIR}")
endif()
mark_as_advanced(LIBEV_INCLUDE_DIR LIBEV_LIBRARY)
