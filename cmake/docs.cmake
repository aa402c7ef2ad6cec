# The docs target: `cmake -DDOXYFILE=... -DOUTPUT=... -P docs.cmake`. Doxygen is looked up here, when the target is
# built, not when the project is configured: installing Doxygen later needs no re-configure, and without it the
# target says what to install instead of not existing.
find_program(TMA_DOXYGEN doxygen)
if(NOT TMA_DOXYGEN)
  message(FATAL_ERROR "libtma docs: Doxygen is not installed. Install it (Debian/Ubuntu: apt-get install doxygen; "
                      "Fedora: dnf install doxygen; macOS: brew install doxygen) and build the docs target again: no "
                      "re-configure is needed.")
endif()
execute_process(COMMAND ${TMA_DOXYGEN} ${DOXYFILE} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "libtma docs: ${TMA_DOXYGEN} ${DOXYFILE} failed (exit status ${rc})")
endif()
message(STATUS "libtma docs: ${OUTPUT}/html/index.html")
