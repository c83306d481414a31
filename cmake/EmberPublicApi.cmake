# SPDX-License-Identifier: MIT
# The engine's public API line: the programs under app/ see the engine through engine/include/ember only. The
# configuration fails when a target there has engine/ (or a folder of it other than engine/include) on its include
# path, or links the engine's internals or kernels directly.
function(ember_check_public_api dir)
  set(engine "${CMAKE_SOURCE_DIR}/engine")
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  foreach(target IN LISTS targets)
    foreach(property INCLUDE_DIRECTORIES INTERFACE_INCLUDE_DIRECTORIES)
      get_target_property(dirs ${target} ${property})
      foreach(include_dir IN LISTS dirs)
        string(FIND "${include_dir}" "${engine}" at)
        string(FIND "${include_dir}" "${engine}/include" public_at)
        if(at GREATER_EQUAL 0 AND NOT public_at EQUAL at)
          message(FATAL_ERROR "${target} (${dir}) has ${include_dir} on its include path: the programs of app/ use "
                              "the engine's public headers (engine/include/ember) only")
        endif()
      endforeach()
    endforeach()
    foreach(property LINK_LIBRARIES INTERFACE_LINK_LIBRARIES)
      get_target_property(libs ${target} ${property})
      foreach(lib IN LISTS libs)
        if(lib MATCHES "engine_internals|kernels_")
          message(FATAL_ERROR "${target} (${dir}) links ${lib}: the programs of app/ use the engine's public API "
                              "(ember::engine) only")
        endif()
      endforeach()
    endforeach()
  endforeach()
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(subdir IN LISTS subdirs)
    ember_check_public_api(${subdir})
  endforeach()
endfunction()
