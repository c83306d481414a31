# SPDX-License-Identifier: MIT
# EMBER_VULKAN: AUTO (the default) builds the Vulkan backend when the Vulkan headers and glslc are found; ON
# insists on it; OFF leaves it out. The loader (libvulkan.so.1) is opened at run time, so it is not needed to build,
# and a binary with the backend still starts where no Vulkan is installed. Sets EMBER_VULKAN_ENABLED.
get_property(_ember_vk_help CACHE EMBER_VULKAN PROPERTY HELPSTRING)
if(_ember_vk_help STREQUAL "Build the Vulkan backend")
  # A build folder configured before the backend existed cached OFF as a refusal, not as a choice.
  set(EMBER_VULKAN AUTO CACHE STRING "" FORCE)
endif()
set(EMBER_VULKAN AUTO CACHE STRING "Build the Vulkan backend: AUTO (when Vulkan headers and glslc are found), ON or OFF")
set_property(CACHE EMBER_VULKAN PROPERTY HELPSTRING
             "Build the Vulkan backend: AUTO (when Vulkan headers and glslc are found), ON or OFF")
set_property(CACHE EMBER_VULKAN PROPERTY STRINGS AUTO ON OFF)

set(EMBER_VULKAN_ENABLED OFF)
if(EMBER_VULKAN)
  find_path(EMBER_VULKAN_INCLUDE_DIR vulkan/vulkan.h)
  find_program(EMBER_GLSLC glslc)
  set(_ember_vk_missing "")
  if(NOT EMBER_VULKAN_INCLUDE_DIR)
    list(APPEND _ember_vk_missing "the Vulkan headers (Debian: libvulkan-dev)")
  endif()
  if(NOT EMBER_GLSLC)
    list(APPEND _ember_vk_missing "glslc (Debian: glslc)")
  endif()
  if(_ember_vk_missing)
    if(EMBER_VULKAN STREQUAL "AUTO")
      message(STATUS "The Vulkan backend is not built: missing ${_ember_vk_missing}")
    else()
      message(FATAL_ERROR "EMBER_VULKAN=${EMBER_VULKAN}: the Vulkan backend needs ${_ember_vk_missing}. "
                          "Install them or configure with -DEMBER_VULKAN=OFF.")
    endif()
  else()
    set(EMBER_VULKAN_ENABLED ON)
    message(STATUS "The Vulkan backend is built (glslc: ${EMBER_GLSLC})")
  endif()
endif()
