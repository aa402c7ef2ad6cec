"""Shared test helpers: a seeded generator (TMA_TEST_SEED replays a run) and comparisons of every element."""

import os

import pytest

import libtma

GPU_SKIP_MARK = "libtma gpu suite skipped:"  # CTest reports the gpu run as Skipped when it sees this


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs a Hopper GPU (and, where said, PyTorch)")


def _seed():
    text = os.environ.get("TMA_TEST_SEED")
    return int(text, 0) if text else int.from_bytes(os.urandom(4), "little")


@pytest.fixture
def rng():
    import numpy as np
    seed = _seed()
    print(f"seed {seed:#x} (TMA_TEST_SEED={seed:#x} replays it)")
    return np.random.default_rng(seed)


def assert_same(got, want, what):
    """Every element equal, bit for bit (NaN patterns included); the message names the first that differs."""
    import numpy as np
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, f"{what}: shape {got.shape}, want {want.shape}"
    got_bits = got.view(np.uint8).reshape(-1) if got.size else got
    want_bits = want.view(np.uint8).reshape(-1) if want.size else want
    differ = np.flatnonzero(got_bits != want_bits)
    if differ.size:
        element = np.unravel_index(differ[0] // max(got.itemsize, 1), got.shape)
        raise AssertionError(f"{what}: {differ.size} byte(s) differ, first in element {tuple(int(i) for i in element)}"
                             f": got {got[element]!r}, want {want[element]!r}")


@pytest.fixture
def lib():
    return libtma


def gpu_unavailable_reason():
    """Why the gpu tests cannot run here, or None: they need libtma's kernels, PyTorch 2.4+ and a Hopper GPU."""
    if not libtma.has_kernels:
        return f"{libtma.library_path} was built without nvcc"
    try:
        import torch
    except ImportError:
        return "PyTorch is not installed (the kernels are checked against it)"
    version = tuple(int(part) for part in torch.__version__.split("+")[0].split(".")[:2])
    if version < (2, 4):
        return f"PyTorch {torch.__version__} is older than 2.4"
    if not torch.cuda.is_available():
        return "no CUDA device"
    major, minor = torch.cuda.get_device_capability()
    if major != 9:
        return f"{torch.cuda.get_device_name()} is sm_{major}{minor}, not a Hopper (sm_90) GPU"
    return None


def pytest_report_header(config):
    reason = gpu_unavailable_reason()
    if reason and config.getoption("markexpr") == "gpu":
        return f"{GPU_SKIP_MARK} {reason}"
    return None


def pytest_collection_modifyitems(config, items):
    reason = gpu_unavailable_reason()
    if reason:
        for item in items:
            if "gpu" in item.keywords:
                item.add_marker(pytest.mark.skip(reason=reason))
