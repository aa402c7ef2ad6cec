# The layers of docs/ARCHITECTURE.md, checked on every #include of the tree:
#   include/tma  - includes only include/tma (and system headers); its C headers include no CUDA header
#   src          - include/tma and src
#   kernels      - include/tma and kernels
#   samples      - include/tma and samples      tools - include/tma and tools
#   python       - include/tma and python (python/abi.c: the package's C half, on the public API)
#   tests        - anything
#   cmake -DSOURCE_DIR=... -P layers.cmake
cmake_minimum_required(VERSION 3.22) # IN_LIST
set(layers include src kernels samples tools python)
set(allowed_include include)
set(allowed_src include src)
set(allowed_kernels include kernels)
set(allowed_samples include samples)
set(allowed_tools include tools)
set(allowed_python include python)
set(errors "")
set(checked 0)
foreach(layer IN LISTS layers)
  file(GLOB_RECURSE files ${SOURCE_DIR}/${layer}/*.c ${SOURCE_DIR}/${layer}/*.h ${SOURCE_DIR}/${layer}/*.cu
       ${SOURCE_DIR}/${layer}/*.cuh ${SOURCE_DIR}/${layer}/*.h.in)
  foreach(f IN LISTS files)
    file(STRINGS ${f} includes REGEX "^[ \t]*#[ \t]*include[ \t]*[<\"]")
    get_filename_component(dir ${f} DIRECTORY)
    file(RELATIVE_PATH rel ${SOURCE_DIR} ${f})
    foreach(line IN LISTS includes)
      math(EXPR checked "${checked} + 1")
      string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*([<\"])([^>\"]+)[>\"].*" "\\1;\\2" parts "${line}")
      list(GET parts 0 quote)
      list(GET parts 1 name)
      # Where the include lands in the tree: next to the file (quoted), or under include/ (tma/...).
      set(target "")
      if(quote STREQUAL "\"" AND EXISTS ${dir}/${name})
        get_filename_component(target ${dir}/${name} ABSOLUTE)
      elseif(name MATCHES "^tma/")
        set(target ${SOURCE_DIR}/include/${name})
      endif()
      if(layer STREQUAL "include" AND NOT f MATCHES "\\.cuh$" AND name MATCHES "^(cuda|cuda_runtime|cuda_bf16|cuda_fp16)\\.h$")
        list(APPEND errors "${rel}: a public C header includes <${name}>: the C API promises no CUDA header")
      endif()
      if(target STREQUAL "")
        if(quote STREQUAL "\"")
          list(APPEND errors "${rel}: #include \"${name}\" does not resolve next to the file or under include/")
        endif()
        continue() # a system header
      endif()
      file(RELATIVE_PATH trel ${SOURCE_DIR} ${target})
      string(REGEX REPLACE "/.*" "" tlayer "${trel}")
      if(NOT tlayer IN_LIST allowed_${layer})
        list(APPEND errors "${rel}: includes ${trel} (layer ${tlayer}), which layer ${layer} may not")
      endif()
    endforeach()
  endforeach()
endforeach()
if(errors)
  list(JOIN errors "\n  " text)
  message(FATAL_ERROR "layering broken (docs/ARCHITECTURE.md):\n  ${text}")
endif()
message(STATUS "${checked} includes follow the layers")
