# The python_cpu test where no Python with NumPy and pytest was found at configure time: fail, and say what to do.
message(FATAL_ERROR "no python3 with NumPy and pytest was found when libtma was configured, so the Python package's "
                    "tests cannot run: apt-get install python3-numpy python3-pytest (or point "
                    "-DTMA_PYTHON_EXECUTABLE at a Python that has them), then configure again")
