# SPDX-License-Identifier: MIT
# Build options. Backends that are not built yet refuse to configure with a clear message, so that a
# user who asks for one learns at once that it does not exist, instead of getting a CPU-only binary.

option(EMBER_TESTS   "Build the test suite (GoogleTest, fixtures, fuzzers)" ON)
option(EMBER_FUZZ    "Build libFuzzer targets with clang (part of the test suite)" ON)
option(EMBER_APP     "Build the Qt 6 desktop application" OFF)
option(EMBER_HIP     "Build the HIP/ROCm backend" OFF)
option(EMBER_CUDA    "Build the HIP kernels as CUDA for NVIDIA GPUs" OFF)
set(EMBER_SANITIZE "" CACHE STRING "Sanitizers for the whole build, e.g. 'address;undefined'")
include(EmberVulkan)  # EMBER_VULKAN: AUTO, ON or OFF

include(EmberGpu)  # EMBER_HIP / EMBER_CUDA: the HIP/CUDA backend's compilers

foreach(backend IN ITEMS EMBER_APP)
  if(${backend})
    message(FATAL_ERROR "${backend}=ON: this part of Ember is not built yet in this revision. "
                        "Configure with -D${backend}=OFF.")
  endif()
endforeach()
