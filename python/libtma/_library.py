"""Finding and loading libtma_python.so, the one C library the package calls.

The lookup is explicit: the file named by the environment variable LIBTMA_LIBRARY if it is set, else the file beside
this module (where `cmake --build` and `cmake --install` put it). Nothing is searched on the loader's path, so the
library a process uses is the one its package came with; when it cannot be loaded, the error names each file tried,
why it failed, and how to get one.
"""

import ctypes
import os
from pathlib import Path

LIBRARY_FILE = "libtma_python.so"
OVERRIDE_VARIABLE = "LIBTMA_LIBRARY"


class LibraryNotFound(ImportError):
    """libtma_python.so could not be loaded; the message lists each place tried and why."""


def _places_to_try():
    explicit = os.environ.get(OVERRIDE_VARIABLE)
    if explicit:
        return [(Path(explicit), f"named by ${OVERRIDE_VARIABLE}")]
    return [(Path(__file__).resolve().parent / LIBRARY_FILE, "beside the package's modules")]


def _how_to_get_one(package_dir):
    hint = [
        "libtma's Python package loads the library its build made, from its own directory:",
        "  cmake -B build && cmake --build build     # then PYTHONPATH=build/python",
        "  cmake --install build --prefix PREFIX     # then PYTHONPATH=PREFIX/lib/python3/site-packages",
        f"or set {OVERRIDE_VARIABLE} to the path of a {LIBRARY_FILE}.",
    ]
    if (package_dir.parent / "CMakeLists.txt").is_file():
        hint.insert(0, f"{package_dir} is the package's source folder, which holds no library: use the build tree's "
                       "copy (PYTHONPATH=build/python).")
    return "\n".join(hint)


def load():
    """The loaded library and its path; raises LibraryNotFound with the reasons."""
    failures = []
    for path, why in _places_to_try():
        if not path.is_file():
            failures.append(f"{path} ({why}): no such file")
            continue
        try:
            return ctypes.CDLL(str(path)), path
        except OSError as error:
            failures.append(f"{path} ({why}): {error}")
    package_dir = Path(__file__).resolve().parent
    raise LibraryNotFound("libtma: cannot load its C library. Tried:\n  " + "\n  ".join(failures) + "\n"
                          + _how_to_get_one(package_dir))
