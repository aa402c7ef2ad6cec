"""libtma's kernels as PyTorch operators (torch.library, PyTorch 2.4 or newer): torch.ops.libtma.permute, .gemm,
.grouped_gemm and .conv2d, with fake (meta) implementations, so torch.compile traces them without running them and
CUDA graphs capture their launches, which go to PyTorch's current stream.

    import libtma.torch as tt
    y = tt.permute(x, (0, 2, 3, 1))      # x.permute(0, 2, 3, 1).contiguous(), on libtma's kernel

permute is a drop-in for x.permute(dims).contiguous() for every tensor: where libtma's kernel cannot take one (a CPU
tensor, 16-byte elements, a broadcast (stride 0) dimension, more than 5 dimensions of more than one element, or 5
with a non-contiguous innermost one), PyTorch's own permute(...).contiguous() runs instead (permute_on_libtma says
which). The other operators take what their kernels take and raise otherwise.
"""

import collections
import functools
from typing import List

import torch

from . import _permute, kernels
from ._c import has_kernels

_MIN_VERSION = (2, 4)
if tuple(int(part) for part in torch.__version__.split("+")[0].split(".")[:2]) < _MIN_VERSION:
    raise ImportError(f"libtma.torch needs PyTorch 2.4 or newer (torch.library.custom_op); this is {torch.__version__}")

_ELEMENT_SIZES = (1, 2, 4, 8)
_K_ALIGN = 8  # elements: TMA's 16-byte row rule for bf16 rows (kernels.h: K a multiple of 8, C likewise)


def _stream(tensor):
    """The handle of PyTorch's current stream on tensor's device. torch.cuda.current_stream() builds a Stream object,
    5-6 us a call on an H200 (docs/guide/python.md, "Host time a call"); the raw handle, which Triton reads too, is
    what the launch needs."""
    return _raw_stream(tensor.device.index)


try:
    _raw_stream = torch._C._cuda_getCurrentRawStream
except AttributeError:  # a PyTorch without it: the public way
    def _raw_stream(index):
        return torch.cuda.current_stream(index).cuda_stream


def _eager(*tensors):
    """Whether a call may run an operator's implementation itself, without PyTorch's dispatcher (about 28 us a call on
    an H200): plain tensors (no fake or subclass), none needing a gradient, no torch.compile tracing. Otherwise the
    registered operator runs, which torch.compile traces and autograd sees."""
    if torch.compiler.is_compiling():
        return False
    grad = torch.is_grad_enabled()
    return all(type(t) is torch.Tensor and not (grad and t.requires_grad) for t in tensors)


def _round_up(value, multiple):
    return -(-value // multiple) * multiple


class _PlanCache:
    """The plans of an operator's recent calls. Making a plan (the checks, the maps' encoding, the kernel's occupancy
    query) costs tens of microseconds of host time, a run a few; PyTorch's caching allocator gives a step's tensors the
    addresses the step before had, so most calls find their plan. The key is everything a plan depends on: the
    device, each tensor's address, shape, strides and dtype, and the operator's arguments; a tensor freed and another
    made at its address with its layout gets the plan made for the first, which is right for it (a cached plan holds
    addresses, not tensors). The least recently used plan goes past `size` entries, except while a CUDA graph is being
    captured (releasing a plan with device memory would synchronize)."""

    def __init__(self, size):
        self._plans = collections.OrderedDict()
        self._size = size

    def plan(self, key, make):
        """The plan of key, made by make() where there is none; None where make() returns None (no plan: the
        caller's fallback)."""
        plan = self._plans.get(key)
        if plan is not None:
            self._plans.move_to_end(key)
            return plan
        plan = make()
        if plan is None:
            return None
        plan._forget_tensors()
        self._plans[key] = plan
        while len(self._plans) > self._size and not torch.cuda.is_current_stream_capturing():
            self._plans.popitem(last=False)[1].close()
        return plan


_PLAN_CACHE_SIZE = 64
_plans = _PlanCache(_PLAN_CACHE_SIZE)


def _layout(t):
    """What a cached plan depends on of tensor t."""
    return (t.data_ptr(), tuple(t.shape), tuple(t.stride()), t.dtype)


def _on_device(device):
    """A context that makes `device` current where it is not (entering torch.cuda.device costs as much as a run)."""
    return torch.cuda.device(device) if torch.cuda.current_device() != device.index else _same_device


class _SameDevice:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


_same_device = _SameDevice()


# ---------------------------------------------------------------------------------------------------------------------
# permute
# ---------------------------------------------------------------------------------------------------------------------


def permute_on_libtma(x, dims):
    """Whether permute(x, dims) runs libtma's kernel (True) or PyTorch's permute(...).contiguous() (False)."""
    if not (has_kernels and x.is_cuda and x.element_size() in _ELEMENT_SIZES):
        return False
    try:
        dims = _permute.normalize_dims(list(dims), x.dim())
        out_shape = _permute.permuted_shape(tuple(x.shape), dims)
        _permute.permute_desc(tuple(x.shape), x.stride(), x.element_size(), dims, _permute.dense_strides(out_shape),
                              0, 0)
    except ValueError:
        return False
    return True


def _permute_impl(x: torch.Tensor, dims: List[int]) -> torch.Tensor:
    if x.numel() == 0 or not (x.is_cuda and has_kernels):
        return x.permute(dims).clone(memory_format=torch.contiguous_format)
    try:
        normal = _permute.normalize_dims(list(dims), x.dim())
    except ValueError:  # not a permutation: PyTorch's permute raises its own error
        return x.permute(dims).clone(memory_format=torch.contiguous_format)
    out = torch.empty(_permute.permuted_shape(tuple(x.shape), normal), dtype=x.dtype, device=x.device)
    with _on_device(x.device):
        plan = _plans.plan(("permute", x.device.index, _layout(x), tuple(normal), _layout(out)),
                           lambda: kernels.PermutePlan(x, normal, out) if permute_on_libtma(x, normal) else None)
        if plan is None:
            # a new tensor in every case (an operator's output may not alias its input, as contiguous()'s may)
            return x.permute(dims).clone(memory_format=torch.contiguous_format)
        plan.run(stream=_stream(x))
    return out


_permute_op = torch.library.custom_op("libtma::permute", mutates_args=())(_permute_impl)


@_permute_op.register_fake
def _permute_fake(x, dims):
    dims = _permute.normalize_dims(list(dims), x.dim())
    return x.new_empty(_permute.permuted_shape(tuple(x.shape), dims))


def _permute_setup(ctx, inputs, output):
    ctx.dims = _permute.normalize_dims(list(inputs[1]), inputs[0].dim())


def _permute_backward(ctx, grad):
    """The gradient of a permute is the inverse permute of its gradient (as for x.permute(dims).contiguous())."""
    inverse = [0] * len(ctx.dims)
    for position, dim in enumerate(ctx.dims):
        inverse[dim] = position
    return permute(grad, inverse), None


_permute_op.register_autograd(_permute_backward, setup_context=_permute_setup)


def permute(x, dims):
    """x.permute(dims).contiguous(), on libtma's permute kernel where it takes x (permute_on_libtma)."""
    dims = list(dims)
    return _permute_impl(x, dims) if _eager(x) else torch.ops.libtma.permute(x, dims)


def transpose(x):
    """x.t().contiguous() for a 2-D x: the permute's 2-D case."""
    if x.dim() != 2:
        raise ValueError(f"transpose takes a 2-D tensor; this one has {x.dim()} dimensions (permute takes any)")
    return permute(x, (1, 0))


# ---------------------------------------------------------------------------------------------------------------------
# gemm
# ---------------------------------------------------------------------------------------------------------------------


def _require(condition, message):
    if not condition:
        raise ValueError(message)


def _tma_ready(t):
    """t dense, row-major and 16-byte aligned (TMA's address rule), copied where it is not."""
    t = t.contiguous()
    return t if t.data_ptr() % 16 == 0 else t.clone()


def _pad_last(t, multiple):
    """Zeros appended to the last dimension up to a multiple of `multiple` (they add nothing to a product)."""
    extra = _round_up(t.shape[-1], multiple) - t.shape[-1]
    return torch.nn.functional.pad(t, (0, extra)) if extra else t


def _gemm_impl(a: torch.Tensor, b: torch.Tensor, out_float32: bool) -> torch.Tensor:
    _require(a.dim() == 2 and b.dim() == 2 and a.shape[1] == b.shape[1],
             f"gemm takes a (M, K) and b (N, K): got {tuple(a.shape)} and {tuple(b.shape)}")
    _require(a.dtype == torch.bfloat16 and b.dtype == torch.bfloat16, f"gemm takes bf16 a and b: got {a.dtype}, "
             f"{b.dtype}")
    _require(a.is_cuda and b.is_cuda and a.device == b.device, "gemm takes a and b on one CUDA device")
    out = torch.empty((a.shape[0], b.shape[0]), dtype=torch.float32 if out_float32 else torch.bfloat16,
                      device=a.device)
    # K padded to a multiple of 8 and operands aligned here, so the kernel reads them through TMA as they are and the
    # C plan allocates nothing (a cudaMalloc would break CUDA graph capture)
    a, b = _tma_ready(_pad_last(a, _K_ALIGN)), _tma_ready(_pad_last(b, _K_ALIGN))
    with _on_device(out.device):
        plan = _plans.plan(("gemm", out.device.index, _layout(a), _layout(b), _layout(out)),
                           lambda: kernels.GemmPlan(a, b, out))
        plan.run(stream=_stream(out))
    return out


_gemm_op = torch.library.custom_op("libtma::gemm", mutates_args=())(_gemm_impl)


@_gemm_op.register_fake
def _gemm_fake(a, b, out_float32):
    return a.new_empty((a.shape[0], b.shape[0]), dtype=torch.float32 if out_float32 else torch.bfloat16)


def gemm(a, b, out_dtype=torch.bfloat16):
    """a @ b.T for bf16 a (M, K) and b (N, K): (M, N) in bf16 or float32 (out_dtype), fp32 accumulation."""
    _require(out_dtype in (torch.bfloat16, torch.float32), f"out_dtype is bf16 or float32, not {out_dtype}")
    out_float32 = out_dtype == torch.float32
    return _gemm_impl(a, b, out_float32) if _eager(a, b) else torch.ops.libtma.gemm(a, b, out_float32)


# ---------------------------------------------------------------------------------------------------------------------
# grouped_gemm
# ---------------------------------------------------------------------------------------------------------------------

# One plan per (device, stream, groups, N, K): its workspace and its pointer arrays live as long as the process, and
# each call writes the groups' addresses into the arrays on the device (a graph replays that copy), so nothing is
# allocated after the first call of a shape. Runs of one plan must be ordered: one plan per stream.
_grouped_plans = {}


class _GroupedSlot:
    """A grouped plan and the device arrays it reads: a_ptrs and c_ptrs (the rows of `ac`), b_ptrs and rows, with the
    buffers that compute them in a few kernels a call."""

    def __init__(self, device, stream, groups, n, k):
        self.stream = stream
        int64 = dict(dtype=torch.int64, device=device)
        self.ac = torch.zeros((2, groups), **int64)  # each group's first byte of a, of out
        self.b = torch.zeros(groups, **int64)
        self.b_address = None  # b's address that self.b holds; None: write it on the next call
        self.index = torch.arange(groups, **int64)
        self.bytes_a_row = torch.tensor([[k * 2], [n * 2]], **int64)  # bytes a row of a, of out (bf16)
        self.first = torch.zeros(groups, dtype=torch.int32, device=device)  # each group's first row: offs shifted
        self.first64 = torch.zeros(groups, **int64)
        self.rows = torch.zeros(groups, dtype=torch.int32, device=device)
        self.expert_bytes = n * k * 2
        self.plan = kernels.GroupedGemmPlan(groups, n, k, self.ac[0], self.b, self.ac[1], self.rows)

    def write(self, a, b, out, offs):
        """The arrays for this call, on the current stream (a CUDA graph captures and replays these kernels)."""
        self.first[1:].copy_(offs[:-1])
        torch.sub(offs, self.first, out=self.rows)
        self.first64.copy_(self.first)
        torch.mul(self.first64, self.bytes_a_row, out=self.ac)
        self.ac[0].add_(a.data_ptr())
        self.ac[1].add_(out.data_ptr())
        capturing = torch.cuda.is_current_stream_capturing()
        if capturing or self.b_address != b.data_ptr():  # the experts' addresses change only with b
            torch.mul(self.index, self.expert_bytes, out=self.b).add_(b.data_ptr())
            # a graph replays its own write; an eager call after it must write again
            self.b_address = None if capturing else b.data_ptr()


def _grouped_slot(device, groups, n, k):
    stream = _raw_stream(device.index)
    key = (device.index, stream, groups, n, k)
    if key not in _grouped_plans:
        _grouped_plans[key] = _GroupedSlot(device, stream, groups, n, k)
    return _grouped_plans[key]


def _grouped_gemm_impl(a: torch.Tensor, b: torch.Tensor, offs: torch.Tensor) -> torch.Tensor:
    _require(a.dim() == 2 and b.dim() == 3 and a.shape[1] == b.shape[2],
             f"grouped_gemm takes a (total M, K) and b (groups, N, K): got {tuple(a.shape)} and {tuple(b.shape)}")
    _require(a.dtype == torch.bfloat16 and b.dtype == torch.bfloat16, "grouped_gemm takes bf16 a and b")
    _require(offs.dtype == torch.int32 and offs.shape == (b.shape[0],) and offs.device == a.device,
             f"offs is an int32 tensor of {b.shape[0]} cumulative row counts on a's device")
    groups, n, k = b.shape
    out = torch.zeros((a.shape[0], n), dtype=torch.bfloat16, device=a.device)
    if groups == 0:
        return out
    a, b = _tma_ready(a), _tma_ready(b)
    with _on_device(a.device):
        slot = _grouped_slot(a.device, groups, n, k)
        slot.write(a, b, out, offs)
        slot.plan.run(stream=slot.stream)
    return out


_grouped_gemm_op = torch.library.custom_op("libtma::grouped_gemm", mutates_args=())(_grouped_gemm_impl)


@_grouped_gemm_op.register_fake
def _grouped_gemm_fake(a, b, offs):
    return a.new_empty((a.shape[0], b.shape[1]), dtype=torch.bfloat16)


def grouped_gemm(a, b, offs):
    """Rows offs[g-1]..offs[g] of a (total M, K) times b[g]^T (b: groups x N x K), bf16, fp32 accumulation: the
    (total M, N) result, as torch._grouped_mm(a, b.transpose(-2, -1), offs=offs); rows past offs[-1] are zero.
    The first call of a (groups, N, K) on a stream allocates that plan's workspace: make it before capturing a graph.
    Groups the device finds invalid are skipped; grouped_gemm_check() reports them."""
    return _grouped_gemm_impl(a, b, offs) if _eager(a, b, offs) else torch.ops.libtma.grouped_gemm(a, b, offs)


def grouped_gemm_check():
    """Wait for each cached plan's stream and raise TmaError for the first invalid group any of them found."""
    for slot in _grouped_plans.values():
        slot.plan.check(stream=slot.stream)


# ---------------------------------------------------------------------------------------------------------------------
# conv2d
# ---------------------------------------------------------------------------------------------------------------------


def _pair(value):
    return [value, value] if isinstance(value, int) else list(value)


@functools.lru_cache(maxsize=256)
def _conv2d_out_shape(x_shape, w_shape, stride, padding, dilation):
    """y's shape, from the C library's rule (tma_conv2d_out_size), once a layer: the call through ctypes costs more
    than the rest of the operator's host work."""
    return kernels.conv2d_output_size(x_shape, w_shape, stride, padding, dilation)


def _conv2d_impl(x: torch.Tensor, w: torch.Tensor, stride: List[int], padding: List[int],
                 dilation: List[int]) -> torch.Tensor:
    _require(x.dim() == 4 and w.dim() == 4 and x.shape[3] == w.shape[3],
             f"conv2d takes x (N, H, W, C) and w (K, R, S, C): got {tuple(x.shape)} and {tuple(w.shape)}")
    _require(x.dtype == torch.bfloat16 and w.dtype == torch.bfloat16, "conv2d takes bf16 x and w")
    out = torch.empty(_conv2d_out_shape(tuple(x.shape), tuple(w.shape), tuple(stride), tuple(padding),
                                        tuple(dilation)),
                      dtype=torch.bfloat16, device=x.device)
    # channels padded to a multiple of 8 here (zeros add nothing), so the kernel reads x and w through TMA as they are
    x, w = _tma_ready(_pad_last(x, _K_ALIGN)), _tma_ready(_pad_last(w, _K_ALIGN))
    with _on_device(x.device):
        # a plan may take a stream-K workspace (tma_conv2d_plan_tiles): the first call of a layout allocates it
        plan = _plans.plan(("conv2d", x.device.index, _layout(x), _layout(w), _layout(out), tuple(stride),
                            tuple(padding), tuple(dilation)),
                           lambda: kernels.Conv2dPlan(x, w, out, stride, padding, dilation))
        plan.run(stream=_stream(x))
    return out


_conv2d_op = torch.library.custom_op("libtma::conv2d", mutates_args=())(_conv2d_impl)


@_conv2d_op.register_fake
def _conv2d_fake(x, w, stride, padding, dilation):
    return x.new_empty(kernels.conv2d_output_size(tuple(x.shape), tuple(w.shape), stride, padding, dilation))


def conv2d(x, w, stride=1, padding=0, dilation=1):
    """conv2d of NHWC x (N, H, W, C) by KRSC w (K, R, S, C), bf16, fp32 accumulation: y (N, P, Q, K). The same as
    torch.nn.functional.conv2d(x.permute(0, 3, 1, 2), w.permute(0, 3, 1, 2), ...).permute(0, 2, 3, 1)."""
    args = (x, w, _pair(stride), _pair(padding), _pair(dilation))
    return _conv2d_impl(*args) if _eager(x, w) else torch.ops.libtma.conv2d(*args)
