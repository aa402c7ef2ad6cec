# PyTorch's permute(...).contiguous() on tma-permute's rank-5 tensor, against PyTorch's own copy (clone), for
# docs/lab/permute.md ("What limits the rest", the rank-5 case). Not part of the build; needs a CUDA GPU and PyTorch:
#     python3 samples/bench/permute/torch_rank5.py
# x has libtma's src dimensions {256, 128, 64, 32, 16} (innermost first), so its PyTorch shape is reversed; libtma's
# perm {1, 3, 0, 4, 2} (dst dimension i = src dimension perm[i], innermost first) is x.permute(2, 0, 4, 1, 3).
import statistics, sys, torch
torch.manual_seed(1)
x = torch.rand(16, 32, 64, 128, 256, device="cuda")  # libtma src {256, 128, 64, 32, 16}, innermost first
cases = {
    "issue's {1,3,0,4,2}": (2, 0, 4, 1, 3),   # dst {d1, d3, d0, d4, d2} innermost first
    "{1,0,3,2,4}": (0, 2, 1, 4, 3),
    "{1,2,0,3,4}": (0, 1, 4, 2, 3),
}
for k, p in cases.items():  # each copy holds the permuted view, every element (one 4 GiB copy at a time)
    if not torch.equal(x.permute(*p).contiguous(), x.permute(*p)):
        sys.exit(f"{k}: permute().contiguous() differs from the permuted view")
torch.cuda.synchronize()
fns = {"clone": lambda: x.clone()}
for k, p in cases.items():
    fns[k] = (lambda p=p: x.permute(*p).contiguous())
for f in fns.values():  # warm-up
    for _ in range(5):
        f()
torch.cuda.synchronize()
times = {k: [] for k in fns}
for r in range(20):
    for k, f in fns.items():
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(); y = f(); b.record(); torch.cuda.synchronize(); del y
        times[k].append(a.elapsed_time(b))
gb = 2 * x.numel() * 4 / 1e9  # GB moved; / ms = TB/s
copy = statistics.median(times["clone"])
print(torch.__version__, torch.cuda.get_device_name())
for k, t in times.items():
    m = statistics.median(t)
    print(f"{k:24s} {m:7.3f} ms {gb / m:7.2f} TB/s {100 * copy / m:6.1f}% of clone")
