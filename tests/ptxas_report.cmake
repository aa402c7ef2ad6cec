# What ptxas says of the kernels, checked: no local-memory spill in any kernel, and no wgmma serialized (ptxas warns of
# spills under -warn-spills but reports a serialized wgmma, C7510-C7519, only as an info line, and the build passes:
# a branch inside the GEMM's main loop once serialized every wgmma of the pipeline, 678 -> 573 TFLOP/s at 8192^3 on an
# H100, with a clean build; docs/lab/grouped_gemm.md "A schedule taken at run time").
#   cmake -DCUDA_COMPILER=... -DSOURCE_DIR=... -DBINARY_DIR=... -P ptxas_report.cmake
cmake_minimum_required(VERSION 3.22)
set(sources kernels/gemm.cu kernels/conv.cu kernels/grouped_gemm.cu kernels/permute.cu)
set(failures "")
foreach(src IN LISTS sources)
  execute_process(
    COMMAND ${CUDA_COMPILER} -O3 -DNDEBUG -std=c++17 -gencode=arch=compute_90a,code=sm_90a --expt-relaxed-constexpr
            -Xptxas=-v -I${SOURCE_DIR}/include -I${BINARY_DIR}/include -I${SOURCE_DIR}/kernels
            -c ${SOURCE_DIR}/${src} -o ${BINARY_DIR}/ptxas_report.o
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    string(APPEND failures "${src}: nvcc failed (${rc}):\n${err}\n")
    continue()
  endif()
  set(report "${out}${err}")
  string(REGEX MATCHALL "[^\n]*wgmma[^\n]*serialized[^\n]*" serialized "${report}")
  string(REGEX MATCHALL "[^\n]* [1-9][0-9]* bytes spill (stores|loads)[^\n]*" spills "${report}")
  string(REGEX MATCHALL "Compiling entry function" kernels "${report}")
  list(LENGTH kernels nkernels)
  list(LENGTH serialized nserialized)
  list(LENGTH spills nspills)
  foreach(line IN LISTS serialized spills)
    string(APPEND failures "${src}: ${line}\n")
  endforeach()
  message(STATUS "${src}: ${nkernels} kernels, ${nserialized} with wgmma serialized, ${nspills} spill lines")
endforeach()
file(REMOVE ${BINARY_DIR}/ptxas_report.o)
if(failures)
  message(FATAL_ERROR "ptxas:\n${failures}")
endif()
