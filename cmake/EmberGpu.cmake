# SPDX-License-Identifier: MIT
# Toolchain of the HIP/CUDA backend (kernels/hip, engine/backend/gpu): one kernel source, two compilers.
#   EMBER_HIP=ON   hipcc for the AMD targets in EMBER_HIP_TARGETS (default gfx1151, Strix Halo; ROCm >= 6.4 knows
#                  it, Debian 12's ROCm 5.2 only gfx1030). Sets EMBER_GPU_BACKEND to "hip".
#   EMBER_CUDA=ON  nvcc for EMBER_CUDA_ARCHITECTURES (default sm_90 machine code for the H100/H200 plus portable
#                  compute_75 PTX). Sets EMBER_GPU_BACKEND to "cuda".
set(EMBER_HIP_TARGETS "gfx1151" CACHE STRING "AMD GPU targets of EMBER_HIP, e.g. gfx1151;gfx1100;gfx1030")
set(EMBER_CUDA_ARCHITECTURES "90-real;75-virtual" CACHE STRING "CUDA architectures of EMBER_CUDA (CMake syntax)")
set(EMBER_GPU_BACKEND "")

if(EMBER_HIP AND EMBER_CUDA)
  message(FATAL_ERROR "EMBER_HIP and EMBER_CUDA build the same kernels for two vendors: choose one per build folder.")
endif()

if(EMBER_CUDA)
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES ${EMBER_CUDA_ARCHITECTURES})
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(NOT CMAKE_CUDA_COMPILER)
    message(FATAL_ERROR "EMBER_CUDA=ON needs nvcc (the CUDA toolkit) on PATH or CMAKE_CUDA_COMPILER set.")
  endif()
  enable_language(CUDA)
  if(NOT CMAKE_CUDA20_STANDARD_COMPILE_OPTION)  # CMake 3.25 predates nvcc's C++20 support
    set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
    set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
  endif()
  find_package(CUDAToolkit REQUIRED)
  set(EMBER_GPU_BACKEND cuda)
elseif(EMBER_HIP)
  find_program(EMBER_HIPCC NAMES hipcc HINTS ENV ROCM_PATH PATH_SUFFIXES bin PATHS /opt/rocm/bin)
  find_path(EMBER_HIP_INCLUDE_DIR hip/hip_runtime_api.h HINTS ENV ROCM_PATH PATH_SUFFIXES include
            PATHS /opt/rocm/include)
  find_library(EMBER_HIP_LIBRARY amdhip64 HINTS ENV ROCM_PATH PATH_SUFFIXES lib PATHS /opt/rocm/lib)
  if(NOT EMBER_HIPCC OR NOT EMBER_HIP_INCLUDE_DIR OR NOT EMBER_HIP_LIBRARY)
    message(FATAL_ERROR "EMBER_HIP=ON needs hipcc, the HIP headers and libamdhip64 (Debian 12: apt install hipcc "
                        "libamdhip64-dev; else ROCm in /opt/rocm or ROCM_PATH). Found: hipcc '${EMBER_HIPCC}', "
                        "headers '${EMBER_HIP_INCLUDE_DIR}', library '${EMBER_HIP_LIBRARY}'.")
  endif()
  set(EMBER_GPU_BACKEND hip)
endif()
