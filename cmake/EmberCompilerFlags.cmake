# SPDX-License-Identifier: MIT
# Warnings and sanitizers for Ember's own targets (not for third-party code).

add_library(ember_compile_options INTERFACE)
if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
  target_compile_options(ember_compile_options INTERFACE
    -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wcast-align -Wformat=2
    -Wimplicit-fallthrough -Wno-missing-field-initializers)
endif()
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
  # GCC 12 reports false positives inside libstdc++'s std::string and std::vector at -O2/-O3
  # (GCC bugs 105329 and 106199); GCC 13 fixed them.
  target_compile_options(ember_compile_options INTERFACE -Wno-restrict -Wno-stringop-overflow)
endif()

if(EMBER_SANITIZE)
  list(JOIN EMBER_SANITIZE "," _ember_sanitizers)
  add_compile_options(-fsanitize=${_ember_sanitizers} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=${_ember_sanitizers})
endif()
