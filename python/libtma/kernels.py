"""The kernels of include/tma/kernels.h on device tensors of any framework (PyTorch, CuPy, JAX, Numba: DLPack or
__cuda_array_interface__), on the current stream of the tensors' framework or the stream given.

Each kernel has a plan class (arguments checked, maps encoded and the launch derived once, by the C plan_make) with
run(stream) for repeated calls, and a one-call function. Outputs are tensors the caller allocates (libtma.torch
allocates them for PyTorch). Every refusal raises TmaError with libtma's status and message.
"""

import ctypes
import weakref

from . import _c, _permute
from ._c import Conv2dShapeC, has_kernels, lib
from ._tensors import current_stream, describe_tensor, require_gpu
from .errors import TmaError, new_diag, raise_for

_GEMM_OUT = {"bfloat16": 0, "float32": 1}  # tma_gemm_out
_EPILOGUES = {"tma_store": 0, "direct": 1}  # tma_gemm_epilogue
_SCHEDULES = {"auto": 0, "tiles": 1, "stream_k": 2, "split_k": 3}  # tma_conv2d_schedule
CONV2D_HALO = -1  # TMA_CONV2D_HALO: Conv2dPlan.tiles' block_m of the halo tile (whole output rows, 3 taps a stage)


def _require_kernels():
    if not has_kernels:
        raise RuntimeError(f"{_c.library_path} was built without nvcc, so it has no GPU kernels (the CPU models are "
                           "in libtma.model); rebuild libtma where nvcc is found (TMA_CUDA=ON insists)")


def _call(function, *args, what):
    diag = new_diag()
    raise_for(function(*args, diag), diag, what)


def _view(tensor, name, stream=None):
    view = describe_tensor(tensor, stream)
    require_gpu(view, name)
    return view


def _require_dtype(view, name, allowed):
    if view.dtype_name not in allowed:
        raise ValueError(f"{name} is {view.dtype_name}; the kernel takes {' or '.join(allowed)}")


def _require_dense(view, name):
    dense = _permute.dense_strides(view.shape)
    # a dimension of one element may carry any stride (PyTorch's contiguous tensors have such strides)
    if 0 not in view.shape and any(s != d for s, d, n in zip(view.strides, dense, view.shape) if n != 1):
        raise ValueError(f"{name} must be dense and row-major (strides {dense} elements); it has strides "
                         f"{view.strides}: make it contiguous first")


def _require_shape(view, name, shape):
    if tuple(view.shape) != tuple(shape):
        raise ValueError(f"{name} has shape {tuple(view.shape)}; the kernel needs {tuple(shape)}")


class _Plan:
    """A C plan in aligned memory, the tensors it points into, and its release (where the C plan has one)."""

    _c_name = None
    _free = None

    def __init__(self, tensors):
        _require_kernels()
        self._plan = _c.Opaque(self._c_name)
        self._tensors = tensors  # the plan holds their addresses: they stay alive with it
        self._finalizer = None

    def _made(self):
        """After plan_make succeeded: release with the plan object (close() or garbage collection)."""
        if self._free is not None:
            self._finalizer = weakref.finalize(self, _release, getattr(lib, self._free), self._plan)

    def _stream(self, stream):
        if stream is None and self._tensors is None:
            raise ValueError("this plan holds no tensors (libtma.torch's cache): give run() its stream")
        return current_stream(None if self._tensors is None else self._tensors[0], stream)

    def _forget_tensors(self):
        """Hold the tensors no longer (libtma.torch's plan cache: it runs a plan only on tensors at the addresses, and
        of the layouts, it was made for, and must not keep them alive). Runs then need an explicit stream."""
        self._tensors = None

    def close(self):
        """Release the plan's device memory (cudaFree: waits for the device). Safe to call twice."""
        if self._finalizer is not None:
            self._finalizer()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _release(free, plan):
    free(plan.address, new_diag())


# ---------------------------------------------------------------------------------------------------------------------
# Permute and transpose
# ---------------------------------------------------------------------------------------------------------------------


class PermutePlan(_Plan):
    """out = src.permute(dims) (numpy's transpose(dims).copy()), any strides of src and out, 1-, 2-, 4- and 8-byte
    elements, rank 1-5 once dimensions of one element are dropped (tma_permute_plan_make)."""

    _c_name = "tma_permute_plan"

    def __init__(self, src, dims, out):
        views, self.desc = _permute_operands(src, dims, out)
        super().__init__(views)
        _call(lib.tma_permute_plan_make, self._plan.address, ctypes.byref(self.desc), what="permute")
        self._made()

    def tune(self, group=0, l2="none"):
        """A transpose plan's tile order (bands of `group` tile columns; 0: row-major) and the maps' L2 promotion."""
        from .descriptors import L2Promotion, _as_member
        _call(lib.tma_permute_plan_tune, self._plan.address, group, _as_member(L2Promotion, l2, "L2_"),
              what="permute tune")

    @property
    def choices(self):
        """What the plan chose: a tile transpose or a copy, the thread kernel or TMA, tiles, grid and block."""
        read = self._plan.read_int
        return {"transpose": bool(read("transpose")), "threads": bool(read("threads")), "rank": read("rank"),
                "tiles": read("tiles"), "grid": read("grid"), "block": read("block")}

    def run(self, stream=None):
        """Launch on `stream` (default: the current stream of src's framework); asynchronous."""
        _call(lib.tma_permute_run, self._plan.address, self._stream(stream), what="permute")


def _permute_operands(src, dims, out):
    """The views of src and out, checked, and the tma_permute_desc of out = src.permute(dims)."""
    src_view, out_view = _view(src, "src"), _view(out, "out")
    if src_view.itemsize != out_view.itemsize:
        raise ValueError(f"src has {src_view.itemsize}-byte elements and out {out_view.itemsize}-byte ones")
    dims = _permute.normalize_dims(list(dims), len(src_view.shape))
    _require_shape(out_view, "out", _permute.permuted_shape(src_view.shape, dims))
    desc = _permute.permute_desc(src_view.shape, src_view.strides, src_view.itemsize, dims, out_view.strides,
                                 src_view.address, out_view.address)
    return [src_view, out_view], desc


def permute(src, dims, out, stream=None):
    """out = src.permute(dims) in one call (tma_permute), asynchronous on the current stream (or `stream`). out: a
    tensor of the permuted shape (any strides). Returns out."""
    _require_kernels()
    views, desc = _permute_operands(src, dims, out)
    _call(lib.tma_permute, ctypes.byref(desc), current_stream(views[0], stream), what="permute")
    return out


def transpose(src, out, stream=None):
    """out = src.T for a 2-D src (the permute's 2-D case). Returns out."""
    return permute(src, (1, 0), out, stream)


# ---------------------------------------------------------------------------------------------------------------------
# GEMM
# ---------------------------------------------------------------------------------------------------------------------


def _gemm_operands(a, b, out):
    """The views of a (M, K), b (N, K) and out (M, N), checked, with M, N, K and out's tma_gemm_out."""
    a_view, b_view, out_view = _view(a, "a"), _view(b, "b"), _view(out, "out")
    for view, name in ((a_view, "a"), (b_view, "b")):
        _require_dtype(view, name, ["bfloat16"])
    _require_dtype(out_view, "out", list(_GEMM_OUT))
    if len(a_view.shape) != 2 or len(b_view.shape) != 2 or a_view.shape[1] != b_view.shape[1]:
        raise ValueError(f"a (M, K) and b (N, K) share K: got {a_view.shape} and {b_view.shape}")
    m, k = a_view.shape
    n = b_view.shape[0]
    _require_shape(out_view, "out", (m, n))
    for view, name in ((a_view, "a"), (b_view, "b"), (out_view, "out")):
        _require_dense(view, name)
    return [a_view, b_view, out_view], m, n, k, _GEMM_OUT[out_view.dtype_name]


class GemmPlan(_Plan):
    """out = a @ b.T: a (M, K) and b (N, K) bf16, row-major; out (M, N) bf16 or float32, row-major; fp32 accumulation
    (tma_gemm_plan_make). Keep the plan for repeated calls on the same tensors."""

    _c_name = "tma_gemm_plan"
    _free = "tma_gemm_plan_free"

    def __init__(self, a, b, out):
        views, m, n, k, out_kind = _gemm_operands(a, b, out)
        super().__init__(views)
        _call(lib.tma_gemm_plan_make, self._plan.address, *(v.address for v in views), out_kind, m, n, k,
              what="gemm")
        self._made()

    def tune(self, cluster=None, epilogue=None, group_m=None, grid_blocks=None):
        """Change the plan's choices (None keeps one): cluster 1 or 2, epilogue "tma_store" or "direct", group_m,
        grid_blocks (tma_gemm_plan_tune)."""
        read = self._plan.read_int
        _call(lib.tma_gemm_plan_tune, self._plan.address, read("cluster") if cluster is None else cluster,
              read("epilogue") if epilogue is None else _EPILOGUES[epilogue],
              read("group_m") if group_m is None else group_m,
              read("grid_blocks") if grid_blocks is None else grid_blocks, what="gemm tune")

    @property
    def choices(self):
        read = self._plan.read_int
        epilogue = {v: k for k, v in _EPILOGUES.items()}[read("epilogue")]
        return {"cluster": read("cluster"), "block_n": read("block_n"), "split_parts": read("split_parts"),
                "group_m": read("group_m"), "epilogue": epilogue, "grid": lib.tma_gemm_grid(self._plan.address),
                "packed": read("packed") != 0}

    def run(self, stream=None):
        _call(lib.tma_gemm_run, self._plan.address, self._stream(stream), what="gemm")


def gemm(a, b, out, stream=None):
    """out = a @ b.T (see GemmPlan) in one call (tma_gemm), asynchronous. Returns out. Where K is not a multiple of 8
    or an operand is not 16-byte aligned, the C call allocates and frees a packed copy (cudaMalloc / cudaFree, which
    wait for the device): keep a GemmPlan for repeated calls."""
    _require_kernels()
    views, m, n, k, out_kind = _gemm_operands(a, b, out)
    _call(lib.tma_gemm, *(v.address for v in views), out_kind, m, n, k, current_stream(views[0], stream),
          what="gemm")
    return out


# ---------------------------------------------------------------------------------------------------------------------
# Grouped GEMM
# ---------------------------------------------------------------------------------------------------------------------


class GroupedGemmPlan(_Plan):
    """C_g = A_g @ B_g.T for g < groups (mixture-of-experts layers; tma_grouped_gemm_plan_make): a_ptrs, b_ptrs,
    c_ptrs are device tensors of `groups` 64-bit addresses of the A_g (M_g x K bf16), B_g (N x K bf16) and C_g (M_g x N
    bf16), rows a device tensor of `groups` int32 M_g. The kernel reads the arrays when it runs, so they may be
    rewritten on the device between runs. Runs of one plan must be ordered (one stream)."""

    _c_name = "tma_grouped_gemm_plan"
    _free = "tma_grouped_gemm_plan_free"

    def __init__(self, groups, n, k, a_ptrs, b_ptrs, c_ptrs, rows):
        views = [_view(t, name) for t, name in ((a_ptrs, "a_ptrs"), (b_ptrs, "b_ptrs"), (c_ptrs, "c_ptrs"),
                                                 (rows, "rows"))]
        super().__init__(views)
        for view, name in zip(views[:3], ("a_ptrs", "b_ptrs", "c_ptrs")):
            _require_dtype(view, name, ["int64", "uint64"])
            _require_shape(view, name, (groups,))
        _require_dtype(views[3], "rows", ["int32"])
        _require_shape(views[3], "rows", (groups,))
        _call(lib.tma_grouped_gemm_plan_make, self._plan.address, groups, n, k, *(v.address for v in views),
              what="grouped_gemm")
        self._made()

    def tune(self, grid_blocks=None, group_m=None):
        """Change grid_blocks (0: one block per multiprocessor) and group_m, None keeping them."""
        read = self._plan.read_int
        _call(lib.tma_grouped_gemm_plan_tune, self._plan.address,
              read("grid_blocks") if grid_blocks is None else grid_blocks,
              read("group_m") if group_m is None else group_m, what="grouped_gemm tune")

    @property
    def choices(self):
        read = self._plan.read_int
        return {"grid_blocks": read("grid_blocks"), "group_m": read("group_m"),
                "thread_loads": bool(read("thread_loads"))}

    def run(self, stream=None):
        _call(lib.tma_grouped_gemm_run, self._plan.address, self._stream(stream), what="grouped_gemm")

    def check(self, stream=None):
        """Wait for `stream`, then raise TmaError for the first group the device found invalid since the last check
        ("group g: ..."); the record is cleared."""
        _call(lib.tma_grouped_gemm_check, self._plan.address, self._stream(stream), what="grouped_gemm")


def grouped_gemm(groups, n, k, a_ptrs, b_ptrs, c_ptrs, rows, stream=None):
    """Make, run, check and release a GroupedGemmPlan: synchronous (waits for the stream)."""
    with GroupedGemmPlan(groups, n, k, a_ptrs, b_ptrs, c_ptrs, rows) as plan:
        plan.run(stream)
        plan.check(stream)


# ---------------------------------------------------------------------------------------------------------------------
# Convolution
# ---------------------------------------------------------------------------------------------------------------------


def _pair(value, name):
    pair = (value, value) if isinstance(value, int) else tuple(value)
    if len(pair) != 2:
        raise ValueError(f"{name} is one number or a (height, width) pair, not {value!r}")
    return pair


def conv2d_shape(x_shape, w_shape, stride=1, padding=0, dilation=1):
    """The tma_conv2d_shape of x (N, H, W, C) and w (K, R, S, C)."""
    if len(x_shape) != 4 or len(w_shape) != 4 or x_shape[3] != w_shape[3]:
        raise ValueError(f"x is (N, H, W, C) and w (K, R, S, C) with the same C: got {tuple(x_shape)} and "
                         f"{tuple(w_shape)}")
    shape = Conv2dShapeC()
    shape.n, shape.h, shape.w, shape.c = x_shape
    shape.k, shape.r, shape.s = w_shape[:3]
    shape.stride_h, shape.stride_w = _pair(stride, "stride")
    shape.pad_h, shape.pad_w = _pair(padding, "padding")
    shape.dilation_h, shape.dilation_w = _pair(dilation, "dilation")
    return shape


def conv2d_output_size(x_shape, w_shape, stride=1, padding=0, dilation=1):
    """y's shape (N, P, Q, K); P or Q is 0 where the filter does not fit."""
    shape = conv2d_shape(x_shape, w_shape, stride, padding, dilation)
    p, q = ctypes.c_int(), ctypes.c_int()
    lib.tma_conv2d_out_size(shape, ctypes.byref(p), ctypes.byref(q))
    return (shape.n, p.value, q.value, shape.k)


def conv2d_check(x_shape, w_shape, stride=1, padding=0, dilation=1):
    """Check a convolution without a GPU (every argument rule and the rules of the maps it needs); raises
    TmaError."""
    shape = conv2d_shape(x_shape, w_shape, stride, padding, dilation)
    _call(lib.tma_conv2d_check, shape, None, None, None, what="conv2d")


def _conv_operands(x, w, y, stride, padding, dilation):
    """The views of x (N, H, W, C), w (K, R, S, C), y (N, P, Q, K), checked, and the tma_conv2d_shape."""
    views = [_view(t, name) for t, name in ((x, "x"), (w, "w"), (y, "y"))]
    for view, name in zip(views, ("x", "w", "y")):
        _require_dtype(view, name, ["bfloat16"])
        _require_dense(view, name)
    shape = conv2d_shape(views[0].shape, views[1].shape, stride, padding, dilation)
    _require_shape(views[2], "y", conv2d_output_size(views[0].shape, views[1].shape, stride, padding, dilation))
    return views, shape


class Conv2dPlan(_Plan):
    """y = conv2d(x, w): x (N, H, W, C), w (K, R, S, C), y (N, P, Q, K), bf16, dense, fp32 accumulation
    (tma_conv2d_plan_make)."""

    _c_name = "tma_conv2d_plan"
    _free = "tma_conv2d_plan_free"

    def __init__(self, x, w, y, stride=1, padding=0, dilation=1):
        views, self.shape = _conv_operands(x, w, y, stride, padding, dilation)
        super().__init__(views)
        _call(lib.tma_conv2d_plan_make, self._plan.address, self.shape, *(v.address for v in views), what="conv2d")
        self._made()

    def tiles(self, block_m=0, block_n=0, schedule="auto"):
        """Choose the tiles and schedule (tma_conv2d_plan_tiles; 0 / "auto": the plan's choice; block_m CONV2D_HALO:
        the halo tile, where the shape has one)."""
        _call(lib.tma_conv2d_plan_tiles, self._plan.address, block_m, block_n, _SCHEDULES[schedule],
              what="conv2d tiles")

    def tune(self, cluster=None, epilogue=None, group_m=None, grid_blocks=None):
        """Change cluster (1 or 2) and epilogue ("tma_store" or "direct"), None keeping them; group_m and grid_blocks,
        None meaning the defaults (tma_conv2d_plan_tune)."""
        read = self._plan.read_int
        _call(lib.tma_conv2d_plan_tune, self._plan.address, read("cluster") if cluster is None else cluster,
              read("epilogue") if epilogue is None else _EPILOGUES[epilogue],
              0 if group_m is None else group_m, 0 if grid_blocks is None else grid_blocks, what="conv2d tune")

    @property
    def choices(self):
        read = self._plan.read_int
        schedule = {v: k for k, v in _SCHEDULES.items()}[read("schedule")]
        return {"block_m": read("block_m"), "block_n": read("block_n"), "cluster": read("cluster"),
                "schedule": schedule, "split_parts": read("split_parts"), "packed": read("packed") != 0}

    def run(self, stream=None):
        _call(lib.tma_conv2d_run, self._plan.address, self._stream(stream), what="conv2d")


def conv2d(x, w, y, stride=1, padding=0, dilation=1, stream=None):
    """y = conv2d(x, w) (see Conv2dPlan) in one call (tma_conv2d: whole tiles, no stream-K workspace), asynchronous.
    Returns y. Where C is not a multiple of 8, the C call allocates and frees a packed copy: keep a Conv2dPlan for
    repeated calls (libtma.torch pads the channels instead)."""
    _require_kernels()
    views, shape = _conv_operands(x, w, y, stride, padding, dilation)
    _call(lib.tma_conv2d, shape, *(v.address for v in views), current_stream(views[0], stream), what="conv2d")
    return y


__all__ = ["CONV2D_HALO", "Conv2dPlan", "GemmPlan", "GroupedGemmPlan", "PermutePlan", "TmaError", "conv2d",
           "conv2d_check", "conv2d_output_size", "gemm", "grouped_gemm", "permute", "transpose"]
