# Install libtma into a scratch prefix and build consumers against it, through find_package(tma) and through
# pkg-config: C and (where nvcc and tma::kernels are there) CUDA consumers of tma::tma and tma::kernels. The C
# consumers run (they need no GPU); the CUDA one runs and says whether it found a GPU. Any failure fails the test.
# SHARED=ON: libtma is first built from LIBTMA_SOURCE with BUILD_SHARED_LIBS=ON (libraries and tools only) and that
# build is installed; then the installed tools must find libtma.so in the prefix, and libtma_kernels.so must export
# the public API only. Otherwise BUILD_DIR, a static build, is installed. PYTHON (an interpreter): the installed Python
# package must import from the prefix.
file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)

function(run)
  execute_process(COMMAND ${ARGV} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "command failed (${rc}): ${ARGV}\n${out}\n${err}")
  endif()
  message(STATUS "${out}")
endfunction()

if(SHARED)
  set(BUILD_DIR ${WORK_DIR}/libtma-shared)
  if(WITH_KERNELS)
    set(cuda_mode -DTMA_CUDA=ON -DCMAKE_CUDA_COMPILER=${CUDA_COMPILER})
  else()
    set(cuda_mode -DTMA_CUDA=OFF)
  endif()
  run(${CMAKE_COMMAND} -S ${LIBTMA_SOURCE} -B ${BUILD_DIR} -DBUILD_SHARED_LIBS=ON -DTMA_BUILD_TESTS=OFF
      -DTMA_BUILD_SAMPLES=OFF -DCMAKE_C_COMPILER=${C_COMPILER} ${cuda_mode})
  run(${CMAKE_COMMAND} --build ${BUILD_DIR} --parallel)
endif()
run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
foreach(tool tma-explain tma-layout)
  if(NOT EXISTS ${prefix}/bin/${tool})
    message(FATAL_ERROR "the install has no bin/${tool}")
  endif()
  run(${prefix}/bin/${tool} --version)
endforeach()
# the licence and the manual come with the install
foreach(doc LICENSE README.md CHANGELOG.md docs/HARDWARE.md)
  if(NOT EXISTS ${prefix}/share/doc/libtma/${doc})
    message(FATAL_ERROR "the install has no share/doc/libtma/${doc}")
  endif()
endforeach()

# PYTHON given: the Python package imports from the prefix in an environment with nothing but PYTHONPATH, and loads
# the library installed beside it.
if(PYTHON)
  file(GLOB package_dir ${prefix}/lib*/python3/site-packages/libtma)
  if(NOT package_dir)
    message(FATAL_ERROR "the install has no Python package (lib/python3/site-packages/libtma)")
  endif()
  get_filename_component(site ${package_dir} DIRECTORY)
  execute_process(COMMAND env -i PATH=/usr/bin:/bin PYTHONPATH=${site} ${PYTHON} -c
                          "import libtma; print(libtma.library_path, libtma.check(libtma.TiledDesc('bf16', (64, 64), (128, 8), swizzle='128B'))[0].status.name)"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0 OR NOT out MATCHES "^${package_dir}/libtma_python.so ERR_BOX_SWIZZLE_SPAN")
    message(FATAL_ERROR "import libtma from ${site} failed or loaded another library (${rc}):\n${out}${err}")
  endif()
  message(STATUS "python: ${out}")
endif()

# The shared kernels library exports kernels.h's names and nothing else (no conv_prepare, kd_fail_rule, pm_plan ...).
if(SHARED AND WITH_KERNELS)
  file(GLOB kernels_so ${prefix}/lib*/libtma_kernels.so)
  execute_process(COMMAND ${NM} -D --defined-only ${kernels_so} OUTPUT_VARIABLE symbols RESULT_VARIABLE rc)
  string(REGEX MATCHALL "[^\n]+" lines "${symbols}")
  set(foreign "")
  foreach(line IN LISTS lines)
    if(NOT line MATCHES " tma_[A-Za-z0-9_]+$")
      list(APPEND foreign "${line}")
    endif()
  endforeach()
  if(NOT rc EQUAL 0 OR NOT lines OR foreign)
    list(JOIN foreign "\n" foreign)
    message(FATAL_ERROR "libtma_kernels.so must export tma_* only (nm rc ${rc}); it also exports:\n${foreign}")
  endif()
endif()

# CMake package: a C-only project (tma::kernels brings its runtimes), then a CUDA one
set(kernels_args "")
if(WITH_KERNELS)
  set(kernels_args -DWITH_KERNELS=ON)
endif()
run(${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${WORK_DIR}/cmake-build -DCMAKE_PREFIX_PATH=${prefix}
    -DCMAKE_C_COMPILER=${C_COMPILER} ${kernels_args})
run(${CMAKE_COMMAND} --build ${WORK_DIR}/cmake-build)
run(${WORK_DIR}/cmake-build/consumer_c)
if(WITH_KERNELS)
  run(${WORK_DIR}/cmake-build/consumer_kernels_c)
  run(${CMAKE_COMMAND} -S ${SOURCE_DIR}/cuda -B ${WORK_DIR}/cmake-build-cuda -DCMAKE_PREFIX_PATH=${prefix}
      -DCMAKE_C_COMPILER=${C_COMPILER} -DCMAKE_CUDA_COMPILER=${CUDA_COMPILER})
  run(${CMAKE_COMMAND} --build ${WORK_DIR}/cmake-build-cuda)
  run(${WORK_DIR}/cmake-build-cuda/consumer_kernels_mixed)
  run(${WORK_DIR}/cmake-build-cuda/consumer_cuda)
endif()

# pkg-config: the flags work with the C compiler and with nvcc, and name no directory of this machine's CUDA
find_program(PKG_CONFIG pkg-config REQUIRED)
file(GLOB pcdir ${prefix}/lib*/pkgconfig)
set(ENV{PKG_CONFIG_PATH} ${pcdir})
function(pc_flags module out) # then, optionally, more pkg-config options (--static)
  execute_process(COMMAND ${PKG_CONFIG} ${ARGN} --cflags --libs ${module} OUTPUT_VARIABLE flags RESULT_VARIABLE rc
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "pkg-config does not know ${module}")
  endif()
  # the flags must not name the CUDA Toolkit's directories (its include/ or lib*/ folders: -I, -L); the word "cuda"
  # may be in the install prefix itself (a build folder named build-cuda, say) and in a library's name (-lcudart)
  separate_arguments(flags UNIX_COMMAND "${flags}")
  foreach(flag IN LISTS flags)
    string(REPLACE "${prefix}" "" flag_outside_prefix "${flag}")
    if(flag_outside_prefix MATCHES "^-[IL].*cuda")
      message(FATAL_ERROR "pkg-config ${module} names a CUDA directory: ${flag}")
    endif()
  endforeach()
  set(${out} ${flags} PARENT_SCOPE)
endfunction()
# (pkg-config gives no run path: the programs of a shared install find its libraries through LD_LIBRARY_PATH, as a
# pkg-config user's would)
set(pc_env ${CMAKE_COMMAND} -E env LD_LIBRARY_PATH=${pcdir}/..)
pc_flags(tma tma_flags)
run(${C_COMPILER} -std=c11 ${SOURCE_DIR}/main.c -o ${WORK_DIR}/consumer-pc ${tma_flags})
run(${pc_env} ${WORK_DIR}/consumer-pc)
if(WITH_KERNELS)
  pc_flags(tma-kernels kernels_flags)
  run(${CUDA_COMPILER} -x c ${SOURCE_DIR}/kernels_main.c -o ${WORK_DIR}/consumer-kernels-pc ${kernels_flags})
  run(${pc_env} ${WORK_DIR}/consumer-kernels-pc)
  if(NOT SHARED)
    # the C compiler links the static kernels with `pkg-config --static` and CUDA's library directory alone (the
    # archive's C++ runtime and the CUDA runtime come from Libs.private)
    get_filename_component(cuda_root ${CUDA_COMPILER} DIRECTORY)
    file(GLOB cudart ${cuda_root}/../lib64/libcudart.so ${cuda_root}/../targets/*/lib/libcudart.so)
    if(NOT cudart)
      message(FATAL_ERROR "no libcudart.so beside ${CUDA_COMPILER}")
    endif()
    list(GET cudart 0 cudart)
    get_filename_component(cuda_lib ${cudart} DIRECTORY)
    pc_flags(tma-kernels kernels_static_flags --static)
    run(${C_COMPILER} -std=c11 ${SOURCE_DIR}/kernels_main.c -o ${WORK_DIR}/consumer-kernels-pc-c
        ${kernels_static_flags} -L${cuda_lib})
    run(${CMAKE_COMMAND} -E env LD_LIBRARY_PATH=${cuda_lib} ${WORK_DIR}/consumer-kernels-pc-c)
  endif()
  run(${CUDA_COMPILER} -std=c++17 -gencode=arch=compute_90a,code=sm_90a ${SOURCE_DIR}/device.cu
      -o ${WORK_DIR}/consumer-cuda-pc ${tma_flags})
  run(${pc_env} ${WORK_DIR}/consumer-cuda-pc)
endif()
