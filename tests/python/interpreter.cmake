# TMA_PYTHON_EXECUTABLE: the Python that runs the package's tests, the first of `python3` on the PATH and
# /usr/bin/python3 that has NumPy and pytest (Debian's python3-numpy and python3-pytest are /usr/bin/python3's, and a
# pyenv or virtualenv python3 may come first on the PATH without them). Empty when none has them.
if(NOT DEFINED TMA_PYTHON_EXECUTABLE)
  find_program(tma_python3_on_path python3)
  set(found "")
  foreach(candidate ${tma_python3_on_path} /usr/bin/python3)
    if(NOT found AND EXISTS ${candidate})
      execute_process(COMMAND ${candidate} -c "import numpy, pytest" RESULT_VARIABLE rc OUTPUT_QUIET ERROR_QUIET)
      if(rc EQUAL 0)
        set(found ${candidate})
      endif()
    endif()
  endforeach()
  set(TMA_PYTHON_EXECUTABLE "${found}" CACHE FILEPATH "Python (with NumPy and pytest) for the Python package's tests")
endif()
