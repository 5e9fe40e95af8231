# What `cmake --install` puts where (GNUInstallDirs), and the Debian package
# (`cpack -G DEB`). Included from the top-level CMakeLists.txt after the
# mcptop target exists. Paths below are relative to the install prefix.
#
#   bin/mcptop
#   share/mcptop/themes/*.json              (found by the binary relative
#                                            to itself: MCPTOP_THEMES_REL)
#   share/man/man1/mcptop.1.gz
#   share/bash-completion/completions/mcptop
#   share/zsh/site-functions/_mcptop
#   share/fish/vendor_completions.d/mcptop.fish
#   share/doc/mcptop/{LICENSE,README.md,CHANGELOG.md}
#   share/doc/mcptop/doc/*.md               (the guides, beside the README
#                                            as in the source, so its links
#                                            to doc/ hold)
#   share/doc/mcptop/examples/{mcptop-serve.json,mcptop-serve.env}
#   lib/systemd/system/mcptop-serve.service (ExecStart names bin/mcptop
#                                            under the prefix)

# The man page carries the version: configured from its one source.
set(MCPTOP_MAN_DATE "2026-11-30")
configure_file(${PROJECT_SOURCE_DIR}/doc/mcptop.1.in
               ${PROJECT_BINARY_DIR}/mcptop.1 @ONLY)

install(TARGETS mcptop RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/themes/
        DESTINATION ${MCPTOP_THEMES_INSTALL_DIR}
        FILES_MATCHING PATTERN "*.json")
# Installed gzipped, as Debian's policy and man-db expect (-n: no name or
# time stamp, so the package is reproducible).
find_program(MCPTOP_GZIP gzip REQUIRED)
add_custom_command(OUTPUT ${PROJECT_BINARY_DIR}/mcptop.1.gz
  COMMAND ${MCPTOP_GZIP} -9 -n -k -f ${PROJECT_BINARY_DIR}/mcptop.1
  DEPENDS ${PROJECT_BINARY_DIR}/mcptop.1 VERBATIM)
add_custom_target(mcptop_man ALL DEPENDS ${PROJECT_BINARY_DIR}/mcptop.1.gz)
install(FILES ${PROJECT_BINARY_DIR}/mcptop.1.gz
        DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
install(FILES ${PROJECT_SOURCE_DIR}/completions/mcptop.bash
        DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions
        RENAME mcptop)
install(FILES ${PROJECT_SOURCE_DIR}/completions/_mcptop
        DESTINATION ${CMAKE_INSTALL_DATADIR}/zsh/site-functions)
install(FILES ${PROJECT_SOURCE_DIR}/completions/mcptop.fish
        DESTINATION ${CMAKE_INSTALL_DATADIR}/fish/vendor_completions.d)
# The daemon's unit: `mcptop serve` under systemd (contrib/systemd/), in
# the prefix's lib/systemd/system (/usr/lib/systemd/system for the
# package; /usr/local/lib/systemd/system, also on systemd's search path,
# by default). Its ExecStart names the binary under the prefix given at
# install time (`cmake --install --prefix`), so it is written then; CPack
# installs with DESTDIR (CPACK_SET_DESTDIR below) for the prefix to be
# /usr there, not its staging directory.
install(CODE "
  file(READ \"${PROJECT_SOURCE_DIR}/contrib/systemd/mcptop-serve.service\" unit)
  string(REPLACE \"ExecStart=/usr/bin/mcptop \"
         \"ExecStart=\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_BINDIR}/mcptop \" unit \"\${unit}\")
  file(WRITE \"${PROJECT_BINARY_DIR}/unit/mcptop-serve.service\" \"\${unit}\")
")
install(FILES ${PROJECT_BINARY_DIR}/unit/mcptop-serve.service
        DESTINATION lib/systemd/system)
install(FILES ${PROJECT_SOURCE_DIR}/contrib/systemd/config.json
        DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples
        RENAME mcptop-serve.json)
install(FILES ${PROJECT_SOURCE_DIR}/contrib/systemd/env.example
        DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples
        RENAME mcptop-serve.env)
install(FILES ${PROJECT_SOURCE_DIR}/LICENSE ${PROJECT_SOURCE_DIR}/README.md
              ${PROJECT_SOURCE_DIR}/CHANGELOG.md
        DESTINATION ${CMAKE_INSTALL_DOCDIR})
# The guides (doc/README.md is their index); the man page is the reference.
# A new guide goes here and in tests/integration/test_install.py's TREE.
set(MCPTOP_GUIDES README audit auth benchmarks incidents install layout
    serve tap tui)
list(TRANSFORM MCPTOP_GUIDES PREPEND ${PROJECT_SOURCE_DIR}/doc/)
list(TRANSFORM MCPTOP_GUIDES APPEND .md)
install(FILES ${MCPTOP_GUIDES} DESTINATION ${CMAKE_INSTALL_DOCDIR}/doc)

# CPack: `cpack -G DEB` in the build directory. Depends comes from the
# shared libraries the binary really links (dpkg-shlibdeps), not a list
# kept by hand.
set(CPACK_PACKAGE_NAME mcptop)
set(CPACK_PACKAGE_VENDOR "the mcptop authors")
set(CPACK_PACKAGE_CONTACT "the mcptop authors")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_RESOURCE_FILE_LICENSE ${PROJECT_SOURCE_DIR}/LICENSE)
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_SET_DESTDIR ON)
set(CPACK_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# The long description; CPack puts the summary line before it.
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
"mcptop dials every configured MCP (Model Context Protocol) server over
Streamable HTTP or stdio, keeps a liveness record per server built only from
exchanges that really happened, classifies every failure with a verdict on
whether the request reached the server, and ends sessions reporting each
ending's outcome and settlement. It runs as a full-screen terminal UI, as a
one-shot check for scripts and CI, as a JSON Lines stream, as a session
terminator and as a Prometheus exporter.")
include(CPack)
