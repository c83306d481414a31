# SPDX-License-Identifier: MIT
# The one version of Ember: the project VERSION plus `git describe`, found at build time (so that a commit needs no
# reconfigure) by ember_version_write.cmake. Programs link ember::version and include "ember_version.h"
# (EMBER_VERSION, e.g. "0.1.0+git42.g15d2d1f0"); CPack reads the same value from ember_version.cmake.
set(EMBER_VERSION_DIR ${CMAKE_BINARY_DIR}/generated/version)
set(_ember_version_args -DEMBER_BASE_VERSION=${PROJECT_VERSION} -DEMBER_SOURCE_DIR=${CMAKE_SOURCE_DIR}
                        -DEMBER_VERSION_DIR=${EMBER_VERSION_DIR} -P ${CMAKE_CURRENT_LIST_DIR}/ember_version_write.cmake)
# Once now, so that the files exist for IDEs and for CPack's configuration; then before every build.
execute_process(COMMAND ${CMAKE_COMMAND} ${_ember_version_args} COMMAND_ERROR_IS_FATAL ANY)
add_custom_target(ember_version_stamp
  COMMAND ${CMAKE_COMMAND} ${_ember_version_args}
  BYPRODUCTS ${EMBER_VERSION_DIR}/ember_version.h ${EMBER_VERSION_DIR}/ember_version.cmake
  COMMENT "Ember version from git describe"
  VERBATIM)
add_library(ember_version INTERFACE)
target_include_directories(ember_version INTERFACE ${EMBER_VERSION_DIR})
add_dependencies(ember_version ember_version_stamp)
add_library(ember::version ALIAS ember_version)
