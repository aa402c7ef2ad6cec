# libtma as a subproject: configure and build a parent project that add_subdirectory()s it, and check that
# libtma's tests, samples and -Werror stay off there (they are for libtma's own top-level build), and that
# BUILD_TESTING=OFF keeps the tests off even at the top level.
file(REMOVE_RECURSE ${WORK_DIR})
function(run out_var)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "command failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  set(${out_var} "${out}" PARENT_SCOPE)
endfunction()

run(out ${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${WORK_DIR}/parent -DLIBTMA_SOURCE=${LIBTMA_SOURCE} -DTMA_CUDA=OFF
    -DCMAKE_C_COMPILER=${C_COMPILER})
foreach(want "TMA_TESTING=OFF" "TMA_BUILD_SAMPLES=OFF" "TMA_WERROR=OFF")
  if(NOT out MATCHES "libtma as a subproject: ${want}")
    message(FATAL_ERROR "as a subproject libtma should have ${want}:\n${out}")
  endif()
endforeach()
if(EXISTS ${WORK_DIR}/parent/libtma/tests)
  message(FATAL_ERROR "libtma configured its tests inside a parent project")
endif()
run(out ${CMAKE_COMMAND} --build ${WORK_DIR}/parent)
run(out ${WORK_DIR}/parent/parent_app)

# Top level with BUILD_TESTING=OFF: no tests (and no Criterion needed).
run(out ${CMAKE_COMMAND} -S ${LIBTMA_SOURCE} -B ${WORK_DIR}/top -DBUILD_TESTING=OFF -DTMA_CUDA=OFF
    -DTMA_BUILD_SAMPLES=OFF -DCMAKE_C_COMPILER=${C_COMPILER})
if(EXISTS ${WORK_DIR}/top/tests)
  message(FATAL_ERROR "BUILD_TESTING=OFF did not turn libtma's tests off")
endif()
message(STATUS "subproject: tests, samples and -Werror off; BUILD_TESTING=OFF honoured")
