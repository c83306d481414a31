# SPDX-License-Identifier: MIT
# Build options. Backends that are not built yet refuse to configure with a clear message, so that a
# user who asks for one learns at once that it does not exist, instead of getting a CPU-only binary.

option(EMBER_TESTS   "Build the test suite (GoogleTest, fixtures, fuzzers)" ON)
option(EMBER_FUZZ    "Build libFuzzer targets with clang (part of the test suite)" ON)
option(EMBER_HIP     "Build the HIP/ROCm backend" OFF)
option(EMBER_CUDA    "Build the HIP kernels as CUDA for NVIDIA GPUs" OFF)
set(EMBER_SANITIZE "" CACHE STRING "Sanitizers for the whole build, e.g. 'address;undefined'")
include(EmberVulkan)  # EMBER_VULKAN: AUTO, ON or OFF

include(EmberGpu)  # EMBER_HIP / EMBER_CUDA: the HIP/CUDA backend's compilers

# The desktop app: AUTO (the default) builds it whenever the Qt 6 modules it needs are found; ON insists on it.
get_property(_ember_app_help CACHE EMBER_APP PROPERTY HELPSTRING)
if(_ember_app_help STREQUAL "Build the Qt 6 desktop application")
  # A build folder configured before the app existed cached EMBER_APP=OFF as a refusal, not as a choice.
  set(EMBER_APP AUTO CACHE STRING "" FORCE)
endif()
set(EMBER_APP AUTO CACHE STRING "Build the Qt 6 desktop application: AUTO (when Qt 6 Quick is found), ON or OFF")
set_property(CACHE EMBER_APP PROPERTY HELPSTRING "Build the Qt 6 desktop application: AUTO (when Qt 6 Quick is found), ON or OFF")
set_property(CACHE EMBER_APP PROPERTY STRINGS AUTO ON OFF)
set(EMBER_APP_QT_COMPONENTS Core Gui Network Concurrent Sql Qml Quick QuickControls2 QuickTest)
set(EMBER_APP_DEBIAN_PACKAGES "qt6-declarative-dev qt6-declarative-dev-tools libqt6sql6-sqlite libqt6svg6 and the qml6-module-* list in packaging/dev.sh")
if(EMBER_APP)  # ON, AUTO (a true-looking string) or any other true value
  find_package(Qt6 6.4 QUIET COMPONENTS ${EMBER_APP_QT_COMPONENTS})
  set(_ember_app_missing "")
  foreach(component IN LISTS EMBER_APP_QT_COMPONENTS)
    if(NOT Qt6${component}_FOUND)
      list(APPEND _ember_app_missing Qt6::${component})
    endif()
  endforeach()
  if(_ember_app_missing)
    if(EMBER_APP STREQUAL "AUTO")
      message(STATUS "The desktop app is not built: missing ${_ember_app_missing} (Debian: ${EMBER_APP_DEBIAN_PACKAGES})")
      set(EMBER_BUILD_APP OFF)
    else()
      message(FATAL_ERROR "EMBER_APP=${EMBER_APP}: the desktop app needs Qt >= 6.4 with ${EMBER_APP_QT_COMPONENTS}; "
                          "missing ${_ember_app_missing}. On Debian 12 install ${EMBER_APP_DEBIAN_PACKAGES}, "
                          "or configure with -DEMBER_APP=OFF.")
    endif()
  else()
    set(EMBER_BUILD_APP ON)
  endif()
else()
  set(EMBER_BUILD_APP OFF)
endif()
