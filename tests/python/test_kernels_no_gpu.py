"""The kernels' Python layer without a GPU: arguments read off any tensor, checked, and passed to the C library, which
says in its status and message that no Hopper GPU is there (as tests/consumer/kernels_main.c does in C). Stand-in
tensors with __cuda_array_interface__ point into host memory the C library never reads: plan_make stops at the device
check. Skipped where a CUDA device exists (a launch through those pointers would fault)."""

import ctypes

import numpy as np
import pytest

import libtma
from libtma import Status, TmaError


def cuda_device_count():
    try:
        driver = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return 0
    count = ctypes.c_int(0)
    if driver.cuInit(0) != 0 or driver.cuDeviceGetCount(ctypes.byref(count)) != 0:
        return 0
    return count.value


pytestmark = [
    pytest.mark.skipif(cuda_device_count() > 0, reason="a CUDA device is here: the gpu tests run the kernels"),
    pytest.mark.skipif(not libtma.has_kernels, reason="libtma was built without nvcc"),
]

NO_GPU = (Status.ERR_DEVICE, Status.ERR_CUDA)


class StandIn:
    """A 'device' tensor: host memory behind a __cuda_array_interface__ (bfloat16 has no typestr: use DLPack's)."""

    def __init__(self, shape, typestr, strides=None):
        itemsize = int(typestr[2:])
        self.memory = np.zeros(int(np.prod(shape)) * itemsize + 256, dtype=np.uint8)
        address = (self.memory.ctypes.data + 255) // 256 * 256
        self.__cuda_array_interface__ = {"shape": tuple(shape), "typestr": typestr, "data": (address, False),
                                         "strides": strides, "version": 3}


def bf16_view(shape):
    """A stand-in bf16 tensor through the TensorView the adapters produce (DLPack would give the same)."""
    from libtma import _tensors
    memory = np.zeros(int(np.prod(shape)) * 2 + 256, dtype=np.uint8)
    address = (memory.ctypes.data + 255) // 256 * 256
    return _tensors.TensorView(address=address, shape=tuple(shape), strides=_tensors.dense_strides(shape),
                               itemsize=2, dtype_name="bfloat16", on_gpu=True, device_id=0, framework="test",
                               keep_alive=memory)


@pytest.fixture
def bf16_tensors(monkeypatch):
    """describe_tensor gives bf16 views for the stand-ins made by bf16_view's shapes (tuples)."""
    from libtma import _tensors, kernels
    monkeypatch.setattr(kernels, "describe_tensor", lambda shape, stream=None: bf16_view(shape))
    return _tensors


def expect_no_gpu(call):
    with pytest.raises(TmaError) as caught:
        call()
    assert caught.value.status in NO_GPU, caught.value
    assert caught.value.message, "the refusal says why"
    return caught.value


def test_permute_and_transpose_say_there_is_no_gpu():
    src, out = StandIn((64, 48), "<f4"), StandIn((48, 64), "<f4")
    error = expect_no_gpu(lambda: libtma.permute(src, (1, 0), out))
    assert error.message.startswith("permute: ")
    expect_no_gpu(lambda: libtma.transpose(src, out))
    expect_no_gpu(lambda: libtma.PermutePlan(src, (1, 0), out))


def test_permute_checks_shapes_before_the_c_library():
    src = StandIn((64, 48), "<f4")
    with pytest.raises(ValueError, match=r"out has shape \(64, 48\); the kernel needs \(48, 64\)"):
        libtma.permute(src, (1, 0), StandIn((64, 48), "<f4"))
    with pytest.raises(ValueError, match="4-byte elements and out 2-byte"):
        libtma.permute(src, (1, 0), StandIn((48, 64), "<u2"))


def test_gemm_grouped_and_conv_say_there_is_no_gpu(bf16_tensors):
    expect_no_gpu(lambda: libtma.gemm((128, 64), (256, 64), (128, 256)))
    expect_no_gpu(lambda: libtma.GemmPlan((128, 64), (256, 64), (128, 256)))
    expect_no_gpu(lambda: libtma.conv2d((1, 8, 8, 64), (64, 3, 3, 64), (1, 8, 8, 64), padding=1))
    expect_no_gpu(lambda: libtma.Conv2dPlan((1, 8, 8, 64), (64, 3, 3, 64), (1, 8, 8, 64), padding=1))


def test_grouped_gemm_says_there_is_no_gpu():
    pointers = [StandIn((4,), "<i8") for _ in range(3)]
    rows = StandIn((4,), "<i4")
    expect_no_gpu(lambda: libtma.GroupedGemmPlan(4, 256, 128, *pointers, rows))
    with pytest.raises(ValueError, match="rows is int64"):
        libtma.GroupedGemmPlan(4, 256, 128, *pointers, StandIn((4,), "<i8"))


def test_kernel_arguments_are_checked_in_python(bf16_tensors):
    with pytest.raises(ValueError, match="share K"):
        libtma.gemm((128, 64), (256, 32), (128, 256))
    with pytest.raises(ValueError, match=r"out has shape \(128, 128\)"):
        libtma.gemm((128, 64), (256, 64), (128, 128))
    with pytest.raises(ValueError, match=r"y has shape"):
        libtma.conv2d((1, 8, 8, 64), (64, 3, 3, 64), (1, 8, 8, 64))  # no padding: y is 6 x 6


def test_host_memory_is_refused():
    host = np.zeros((4, 4), dtype=np.float32)
    with pytest.raises(ValueError, match="not in GPU memory"):
        libtma.permute(host, (1, 0), host)
