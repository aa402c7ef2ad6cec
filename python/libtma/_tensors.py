"""Reading a tensor's address, shape, strides and element type from any framework, and choosing its stream.

PyTorch tensors are read directly; other tensors through DLPack (__dlpack__: CuPy, JAX, NumPy, ...) or, failing
that, __cuda_array_interface__ (Numba, CuPy). Strides are in elements, the shape outermost first, as the frameworks
have them.
"""

import ctypes
from dataclasses import dataclass
from typing import Any, Tuple

# DLPack (dlpack.h): the C structs of the "dltensor" capsule
_DL_CPU, _DL_CUDA, _DL_CUDA_HOST, _DL_CUDA_MANAGED = 1, 2, 3, 13
_DL_TYPE_NAMES = {(0, 8): "int8", (0, 16): "int16", (0, 32): "int32", (0, 64): "int64", (1, 8): "uint8",
                  (1, 16): "uint16", (1, 32): "uint32", (1, 64): "uint64", (2, 16): "float16", (2, 32): "float32",
                  (2, 64): "float64", (4, 16): "bfloat16", (6, 8): "bool"}


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32), ("dtype", _DLDataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype = ctypes.c_void_p
_capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]

# __cuda_array_interface__ typestr (little-endian) to names
_TYPESTR_NAMES = {"u1": "uint8", "u2": "uint16", "u4": "uint32", "u8": "uint64", "i1": "int8", "i2": "int16",
                  "i4": "int32", "i8": "int64", "f2": "float16", "f4": "float32", "f8": "float64", "b1": "bool"}


@dataclass
class TensorView:
    """What the kernels need of a tensor. keep_alive holds what keeps the memory valid (the tensor, a capsule)."""

    address: int
    shape: Tuple[int, ...]
    strides: Tuple[int, ...]  # elements
    itemsize: int
    dtype_name: str
    on_gpu: bool
    device_id: int
    framework: str
    keep_alive: Any = None


def dense_strides(shape):
    """The strides, in elements, of a dense row-major tensor of `shape` (outermost first)."""
    strides, stride = [], 1
    for size in reversed(shape):
        strides.append(stride)
        stride *= size
    return tuple(reversed(strides))


def _from_torch(tensor):
    return TensorView(address=tensor.data_ptr(), shape=tuple(tensor.shape), strides=tuple(tensor.stride()),
                      itemsize=tensor.element_size(), dtype_name=str(tensor.dtype).removeprefix("torch."),
                      on_gpu=tensor.is_cuda, device_id=tensor.device.index if tensor.is_cuda else -1,
                      framework="torch", keep_alive=tensor)


def _from_dlpack(obj, stream):
    device_type = obj.__dlpack_device__()[0] if hasattr(obj, "__dlpack_device__") else _DL_CUDA
    if device_type in (_DL_CUDA, _DL_CUDA_MANAGED):
        # the producer orders its work before `stream` (1: the legacy default stream; 0 is not allowed)
        capsule = obj.__dlpack__(stream=stream or 1)
    else:
        capsule = obj.__dlpack__()  # host memory: no stream
    dl = _DLTensor.from_address(_capsule_pointer(capsule, b"dltensor"))
    shape = tuple(dl.shape[i] for i in range(dl.ndim))
    strides = tuple(dl.strides[i] for i in range(dl.ndim)) if dl.strides else dense_strides(shape)
    key = (dl.dtype.code, dl.dtype.bits)
    if dl.dtype.lanes != 1 or key not in _DL_TYPE_NAMES:
        raise TypeError(f"DLPack element type code {dl.dtype.code}, {dl.dtype.bits} bits, {dl.dtype.lanes} lanes: "
                        "libtma takes 1-, 2-, 4- and 8-byte scalars")
    device = dl.device.device_type
    return TensorView(address=(dl.data or 0) + dl.byte_offset, shape=shape, strides=strides,
                      itemsize=dl.dtype.bits // 8, dtype_name=_DL_TYPE_NAMES[key],
                      on_gpu=device in (_DL_CUDA, _DL_CUDA_MANAGED), device_id=dl.device.device_id,
                      framework=type(obj).__module__.split(".")[0], keep_alive=(obj, capsule))


def _from_cuda_array_interface(obj):
    cai = obj.__cuda_array_interface__
    code = cai["typestr"][1:]
    if code not in _TYPESTR_NAMES:
        raise TypeError(f"__cuda_array_interface__ typestr {cai['typestr']!r}: libtma takes 1-, 2-, 4- and 8-byte "
                        "scalars (bf16 tensors: pass them through DLPack)")
    itemsize = int(code[1:])
    shape = tuple(cai["shape"])
    byte_strides = cai.get("strides")
    strides = tuple(s // itemsize for s in byte_strides) if byte_strides else dense_strides(shape)
    return TensorView(address=cai["data"][0] or 0, shape=shape, strides=strides, itemsize=itemsize,
                      dtype_name=_TYPESTR_NAMES[code], on_gpu=True, device_id=-1,
                      framework=type(obj).__module__.split(".")[0], keep_alive=obj)


def describe_tensor(obj, stream=None):
    """A TensorView of a PyTorch tensor, a DLPack tensor or a __cuda_array_interface__ object."""
    if type(obj).__module__.split(".")[0] == "torch" and hasattr(obj, "data_ptr"):
        return _from_torch(obj)
    if hasattr(obj, "__dlpack__"):
        return _from_dlpack(obj, stream)
    if hasattr(obj, "__cuda_array_interface__"):
        return _from_cuda_array_interface(obj)
    raise TypeError(f"{type(obj).__name__} is not a tensor libtma can read: it has neither __dlpack__ nor "
                    "__cuda_array_interface__")


def current_stream(view, stream=None):
    """The stream to launch on: `stream` if given (an int handle, or an object with .cuda_stream or .ptr), else the
    current stream of the tensor's framework (PyTorch, CuPy), else the default stream (0)."""
    if stream is not None:
        return _stream_handle(stream)
    if view.framework == "torch":
        import torch
        return torch.cuda.current_stream(view.keep_alive.device).cuda_stream
    if view.framework == "cupy":
        import cupy
        return cupy.cuda.get_current_stream().ptr
    return 0


def _stream_handle(stream):
    for attribute in ("cuda_stream", "ptr", "handle"):
        if hasattr(stream, attribute):
            return int(getattr(stream, attribute))
    return int(stream)


def require_gpu(view, name):
    if not view.on_gpu:
        raise ValueError(f"{name} is not in GPU memory: the kernels take device tensors (the CPU models: libtma.model)")
