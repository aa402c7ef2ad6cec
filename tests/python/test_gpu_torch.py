"""The kernels on a Hopper GPU against PyTorch: every element compared, fresh random data each run (TMA_TEST_SEED
replays one), outputs poisoned first where the caller allocates them, NaN never passing. Marked gpu: skipped, with
the reason, without libtma's kernels, PyTorch 2.4+ and an sm_90 device (conftest.py)."""

import math

import pytest

from conftest import gpu_unavailable_reason

pytestmark = pytest.mark.gpu

if gpu_unavailable_reason() is None:
    import torch
    import libtma
    import libtma.torch as tt


@pytest.fixture
def gen(rng):
    """A torch generator on the GPU, seeded from the test's seed."""
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    g = torch.Generator(device="cuda")
    g.manual_seed(int(rng.integers(0, 1 << 62)))
    return g


def random_bits(shape, dtype, gen):
    """Random bits of any dtype (NaN and infinity patterns included for floats): random bytes, viewed as the type."""
    itemsize = torch.empty((), dtype=dtype).element_size()
    raw = torch.randint(0, 256, (*shape, itemsize), generator=gen, device="cuda", dtype=torch.uint8)
    return raw.view(dtype).reshape(shape)


def as_bits(t):
    ints = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[t.element_size()]
    return t.contiguous().view(ints)


def assert_bitwise_equal(got, want, what):
    assert got.shape == want.shape, f"{what}: shape {tuple(got.shape)}, want {tuple(want.shape)}"
    differ = (as_bits(got) != as_bits(want)).nonzero()
    assert differ.numel() == 0, f"{what}: {differ.shape[0]} elements differ, first at {differ[0].tolist()}"


def assert_close(got, want, rtol, atol, what):
    """Every element finite and within atol + rtol * |want| of the fp32 reference."""
    assert got.shape == want.shape, f"{what}: shape {tuple(got.shape)}, want {tuple(want.shape)}"
    if got.numel() == 0:  # an empty group: nothing to compare
        return
    got = got.float()
    assert torch.isfinite(got).all(), f"{what}: {(~torch.isfinite(got)).sum().item()} non-finite elements"
    error = (got - want).abs() - (atol + rtol * want.abs())
    worst = int(error.argmax())
    assert error.max().item() <= 0, (f"{what}: element {worst} is {got.reshape(-1)[worst].item()}, want "
                                     f"{want.reshape(-1)[worst].item()}")


# ---------------------------------------------------------------------------------------------------------------------
# permute
# ---------------------------------------------------------------------------------------------------------------------

PERMUTE_TYPES = ["float32", "bfloat16", "float16", "uint8", "int8", "int64", "float64"]


def random_view(rng, gen, dtype):
    """A random rank 1-5 tensor, sometimes a strided view (steps, a transposed storage)."""
    rank = int(rng.integers(1, 6))
    shape = [int(rng.choice([1, 2, 3, 7, 16, 33, 64, 129, 250])) for _ in range(rank)]
    while math.prod(shape) > 1 << 22:
        shape[int(rng.integers(0, rank))] = max(1, shape[0] // 4)
    if rank <= 4 and rng.random() < 0.3:
        steps = [int(s) for s in rng.integers(1, 3, size=rank)]
        base = random_bits([s * k for s, k in zip(shape, steps)], getattr(torch, dtype), gen)
        return base[tuple(slice(None, None, k) for k in steps)]
    base = random_bits(shape, getattr(torch, dtype), gen)
    # a transposed storage (the innermost dimension strided) up to rank 4: at 5 the operator falls back to PyTorch
    return base.transpose(0, rank - 1) if 1 < rank <= 4 and rng.random() < 0.3 else base


@pytest.mark.parametrize("trial", range(60))
def test_permute_operator_is_permute_contiguous(rng, gen, trial):
    x = random_view(rng, gen, PERMUTE_TYPES[trial % len(PERMUTE_TYPES)])
    dims = [int(d) for d in rng.permutation(x.dim())]
    assert tt.permute_on_libtma(x, dims), f"{tuple(x.shape)} strides {x.stride()} by {dims} fell back to PyTorch"
    got = tt.permute(x, dims)
    assert got.is_contiguous()
    assert_bitwise_equal(got, x.permute(dims).contiguous(), f"{x.dtype} {tuple(x.shape)} {x.stride()} by {dims}")


@pytest.mark.parametrize("trial", range(20))
def test_permute_into_a_poisoned_strided_out(rng, gen, trial):
    x = random_view(rng, gen, "float32")
    dims = [int(d) for d in rng.permutation(x.dim())]
    shape = [x.shape[d] for d in dims]
    backing = torch.full([s + 2 for s in shape], float("nan"), device="cuda")  # every element poisoned
    out = backing[tuple(slice(1, 1 + s) for s in shape)]
    libtma.permute(x, dims, out)
    assert_bitwise_equal(out, x.permute(dims), "permute into a view")
    outside = torch.ones_like(backing, dtype=torch.bool)
    outside[tuple(slice(1, 1 + s) for s in shape)] = False
    assert torch.isnan(backing[outside]).all(), "an element outside out was written"


@pytest.mark.parametrize("trial", range(6))
def test_permute_operator_carries_gradients(rng, gen, trial):
    """A drop-in for x.permute(dims).contiguous() in training: the same gradient, bit for bit."""
    x = random_view(rng, gen, ["float32", "bfloat16", "float64"][trial % 3]).clone()
    x = torch.randn(x.shape, generator=gen, device="cuda", dtype=x.dtype).requires_grad_()
    dims = [int(d) for d in rng.permutation(x.dim())]
    y = tt.permute(x, dims)
    grad = torch.randn(y.shape, generator=gen, device="cuda", dtype=y.dtype)
    (got,) = torch.autograd.grad(y, x, grad)
    reference = x.detach().clone().requires_grad_()
    (want,) = torch.autograd.grad(reference.permute(dims).contiguous(), reference, grad)
    assert_bitwise_equal(y.detach(), reference.detach().permute(dims), "forward")
    assert_bitwise_equal(got, want, f"gradient of {tuple(x.shape)} by {dims}")


def test_permute_falls_back_where_the_kernel_cannot_take_x(gen):
    broadcast = torch.arange(8.0, device="cuda").expand(4, 8)
    assert not tt.permute_on_libtma(broadcast, (1, 0))
    assert_bitwise_equal(tt.permute(broadcast, (1, 0)), broadcast.t().contiguous(), "broadcast")
    cpu = torch.arange(6.0).reshape(2, 3)
    assert torch.equal(tt.permute(cpu, (1, 0)), cpu.t().contiguous())


def test_transpose_plan_runs_again_on_new_data(gen):
    x = random_bits((1000, 384), torch.float32, gen)
    out = torch.empty((384, 1000), device="cuda")
    plan = libtma.PermutePlan(x, (1, 0), out)
    assert plan.choices["transpose"] and not plan.choices["threads"], plan.choices  # TMA describes both
    for _ in range(3):
        x.copy_(random_bits(x.shape, torch.float32, gen))
        out.fill_(float("nan"))
        plan.run()
        assert_bitwise_equal(out, x.t(), "plan run")


# ---------------------------------------------------------------------------------------------------------------------
# gemm
# ---------------------------------------------------------------------------------------------------------------------

GEMM_SHAPES = [(128, 256, 64), (1, 4096, 4096), (77, 300, 40), (1000, 1000, 1000), (64, 8, 8), (513, 257, 129),
               (3, 5, 7), (4096, 4096, 256)]


def reference_mm(a, b):
    return a.float() @ b.float().t()


@pytest.mark.parametrize("m,n,k", GEMM_SHAPES)
@pytest.mark.parametrize("out_dtype", ["bfloat16", "float32"])
def test_gemm_operator_against_fp32(gen, m, n, k, out_dtype):
    a = torch.rand((m, k), generator=gen, device="cuda").sub_(0.5).bfloat16()
    b = torch.rand((n, k), generator=gen, device="cuda").sub_(0.5).bfloat16()
    got = tt.gemm(a, b, out_dtype=getattr(torch, out_dtype))
    assert got.dtype == getattr(torch, out_dtype) and got.shape == (m, n)
    rtol = 2.0 ** -8 if out_dtype == "bfloat16" else 1e-5
    assert_close(got, reference_mm(a, b), rtol, 1e-4 * math.sqrt(k), f"gemm {m}x{n}x{k} {out_dtype}")


def test_gemm_plan_into_poisoned_out_and_tune(gen):
    m, n, k = 300, 520, 256
    a = torch.randn((m, k), generator=gen, device="cuda").bfloat16()
    b = torch.randn((n, k), generator=gen, device="cuda").bfloat16()
    out = torch.full((m, n), float("nan"), device="cuda")
    with libtma.GemmPlan(a, b, out) as plan:
        plan.run()
        assert_close(out, reference_mm(a, b), 1e-5, 1e-4 * math.sqrt(k), "plan")
        with pytest.raises(libtma.TmaError) as caught:
            plan.tune(cluster=3)
        assert caught.value.status == libtma.Status.ERR_ARG and "cluster" in caught.value.message
        plan.tune(cluster=1, epilogue="direct")
        out.fill_(float("nan"))
        plan.run()
        assert_close(out, reference_mm(a, b), 1e-5, 1e-4 * math.sqrt(k), "tuned plan")


def test_gemm_refuses_mismatched_operands():
    a = torch.zeros((4, 8), dtype=torch.bfloat16, device="cuda")
    with pytest.raises(ValueError, match="share K|takes a"):
        tt.gemm(a, torch.zeros((4, 16), dtype=torch.bfloat16, device="cuda"))


# ---------------------------------------------------------------------------------------------------------------------
# grouped_gemm
# ---------------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("groups,n,k", [(8, 256, 128), (16, 512, 64), (4, 100, 72), (5, 64, 30)])
def test_grouped_gemm_operator_against_each_group(rng, gen, groups, n, k):
    counts = [int(c) for c in rng.integers(0, 300, size=groups)]
    counts[int(rng.integers(0, groups))] = 0  # an empty group
    total = sum(counts)
    a = torch.randn((total, k), generator=gen, device="cuda").bfloat16()
    b = torch.randn((groups, n, k), generator=gen, device="cuda").bfloat16()
    offs = torch.tensor(counts, device="cuda", dtype=torch.int32).cumsum(0, dtype=torch.int32)
    got = tt.grouped_gemm(a, b, offs)
    tt.grouped_gemm_check()
    start = 0
    for g, count in enumerate(counts):
        want = reference_mm(a[start:start + count], b[g])
        assert_close(got[start:start + count], want, 2.0 ** -8, 1e-4 * math.sqrt(k), f"group {g} of {counts}")
        start += count


# ---------------------------------------------------------------------------------------------------------------------
# conv2d
# ---------------------------------------------------------------------------------------------------------------------

CONV_CASES = [  # (n, h, w, c, k, r, s, stride, padding, dilation)
    (2, 56, 56, 64, 64, 3, 3, 1, 1, 1),
    (1, 28, 28, 128, 256, 3, 3, 2, 1, 1),
    (4, 14, 14, 256, 256, 1, 1, 1, 0, 1),
    (2, 32, 32, 3, 64, 7, 7, 2, 3, 1),  # the 3-channel stem: channels padded to 8 by the operator
    (1, 17, 23, 40, 72, 3, 5, (2, 1), (1, 2), (2, 1)),
]


@pytest.mark.parametrize("case", CONV_CASES)
def test_conv2d_operator_against_fp32(gen, case):
    n, h, w, c, k, r, s, stride, padding, dilation = case
    x = torch.randn((n, h, w, c), generator=gen, device="cuda").bfloat16()
    weight = torch.randn((k, r, s, c), generator=gen, device="cuda").bfloat16()
    got = tt.conv2d(x, weight, stride, padding, dilation)
    want = torch.nn.functional.conv2d(x.float().permute(0, 3, 1, 2), weight.float().permute(0, 3, 1, 2),
                                      stride=stride, padding=padding, dilation=dilation).permute(0, 2, 3, 1)
    assert_close(got, want, 2.0 ** -8, 1e-4 * math.sqrt(r * s * c), f"conv2d {case}")


def test_conv2d_plan_into_poisoned_y(gen):
    x = torch.randn((2, 20, 20, 64), generator=gen, device="cuda").bfloat16()
    weight = torch.randn((128, 3, 3, 64), generator=gen, device="cuda").bfloat16()
    y = torch.full((2, 20, 20, 128), float("nan"), device="cuda", dtype=torch.bfloat16)
    with libtma.Conv2dPlan(x, weight, y, padding=1) as plan:
        plan.run()
    want = torch.nn.functional.conv2d(x.float().permute(0, 3, 1, 2), weight.float().permute(0, 3, 1, 2),
                                      padding=1).permute(0, 2, 3, 1)
    assert_close(y, want, 2.0 ** -8, 1e-4 * math.sqrt(9 * 64), "conv2d plan")


def test_conv2d_plan_halo_tile(gen):
    """The halo tile asked for by name (libtma.CONV2D_HALO), into a poisoned y, against F.conv2d in fp32."""
    x = torch.randn((2, 9, 30, 72), generator=gen, device="cuda").bfloat16()
    weight = torch.randn((104, 3, 3, 72), generator=gen, device="cuda").bfloat16()
    y = torch.full((2, 9, 30, 104), float("nan"), device="cuda", dtype=torch.bfloat16)
    with libtma.Conv2dPlan(x, weight, y, padding=1) as plan:
        plan.tiles(libtma.CONV2D_HALO)
        assert plan.choices["block_m"] == libtma.CONV2D_HALO and plan.choices["block_n"] == 64
        plan.run()
    want = torch.nn.functional.conv2d(x.float().permute(0, 3, 1, 2), weight.float().permute(0, 3, 1, 2),
                                      padding=1).permute(0, 2, 3, 1)
    assert_close(y, want, 2.0 ** -8, 1e-4 * math.sqrt(9 * 72), "conv2d halo tile")


# ---------------------------------------------------------------------------------------------------------------------
# torch.compile and CUDA graphs
# ---------------------------------------------------------------------------------------------------------------------


def test_operators_under_torch_compile(gen):
    x = random_bits((64, 3, 40, 40), torch.float32, gen).nan_to_num()
    a = torch.randn((256, 128), generator=gen, device="cuda").bfloat16()
    b = torch.randn((192, 128), generator=gen, device="cuda").bfloat16()

    @torch.compile(fullgraph=True)
    def both(x, a, b):
        return tt.permute(x, (0, 2, 3, 1)) + 1, tt.gemm(a, b, torch.float32) * 2

    nhwc, product = both(x, a, b)
    assert_bitwise_equal(nhwc, x.permute(0, 2, 3, 1).contiguous() + 1, "compiled permute")
    assert_close(product, reference_mm(a, b) * 2, 1e-5, 1e-3, "compiled gemm")


def test_operators_in_a_cuda_graph(gen):
    x = random_bits((37, 129, 65), torch.float32, gen)
    a = torch.randn((300, 256), generator=gen, device="cuda").bfloat16()
    b = torch.randn((400, 256), generator=gen, device="cuda").bfloat16()
    tt.permute(x, (2, 0, 1)), tt.gemm(a, b)  # warm-up outside the capture
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        permuted = tt.permute(x, (2, 0, 1))
        product = tt.gemm(a, b, torch.float32)
    for _ in range(2):
        x.copy_(random_bits(x.shape, torch.float32, gen))
        a.copy_(torch.randn(a.shape, generator=gen, device="cuda"))
        graph.replay()
        assert_bitwise_equal(permuted, x.permute(2, 0, 1), "replayed permute")
        assert_close(product, reference_mm(a, b), 1e-5, 1e-4 * 16, "replayed gemm")


def test_cupy_arrays_through_dlpack(gen):
    cupy = pytest.importorskip("cupy")
    x = cupy.random.random((300, 200), dtype=cupy.float32)
    out = cupy.full((200, 300), cupy.nan, dtype=cupy.float32)
    libtma.transpose(x, out)
    cupy.cuda.get_current_stream().synchronize()
    assert bool((out == x.T).all())
