"""libtma's statuses as a Python enum, and the exception every refusal raises.

Status is built from the library's own table (TMA_STATUS_MAP through tma_status_name), so its members are the
library's, values included: Status.ERR_BOX_SWIZZLE_SPAN == 13.
"""

import enum
from typing import NamedTuple

from ._c import DiagC, lib


def _status_table():
    members = {}
    for value in range(1 << 16):
        name = lib.tma_status_name(value).decode()
        if name == "TMA_UNKNOWN_STATUS":
            break
        members[name[len("TMA_"):]] = value
    return members


Status = enum.IntEnum("Status", _status_table(), module=__name__)
Status.__doc__ = "libtma's status codes (tma_status): OK = 0, then the ERR_* values of include/tma/types.h."


def status_of(value):
    """The Status of a number, or the number itself where the table has none."""
    try:
        return Status(value)
    except ValueError:
        return value


class Violation(NamedTuple):
    """One broken rule: its status and libtma's message (the field, its value, the limit and a fix)."""

    status: Status
    message: str

    def __str__(self):
        return f"TMA_{self.status.name}: {self.message}" if isinstance(self.status, Status) else self.message


class TmaError(Exception):
    """A refusal of libtma: a descriptor, a copy, a kernel's arguments, the driver or CUDA.

    status: the Status (status.name is "ERR_RANK", int(status) its number); message: libtma's message;
    violations: every broken rule where the refusal came from a check of all of them (else the one).
    """

    def __init__(self, status, message, violations=None):
        self.status = status_of(status)
        self.message = message
        self.violations = list(violations) if violations else [Violation(self.status, message)]
        name = f"TMA_{self.status.name}" if isinstance(self.status, Status) else "TMA_UNKNOWN_STATUS"
        lines = [f"{name} ({int(status)}): {message}"]
        lines += [f"  also {violation}" for violation in self.violations[1:]]
        super().__init__("\n".join(lines))

    @property
    def status_name(self):
        """The C name of the status, e.g. "TMA_ERR_RANK"."""
        return lib.tma_status_name(int(self.status)).decode()


def diag_message(diag, status):
    """The message of a filled tma_diag, or the status's one-line description where the diag says nothing."""
    text = diag.message.decode(errors="replace")
    return text if text else lib.tma_strerror(int(status)).decode()


def raise_for(status, diag, context=""):
    """Raise TmaError for a status other than OK, with the diag's message (prefixed by context, if given)."""
    if status != 0:
        message = diag_message(diag, status)
        raise TmaError(status, f"{context}: {message}" if context else message)


def new_diag():
    return DiagC()
