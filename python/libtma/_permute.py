"""From a framework's view of a permutation (shape outermost first, strides in elements, dims as in
numpy.transpose / torch.permute) to a tma_permute_desc (dimension 0 innermost, strides in bytes, a stride of 0
read as "dense"). Shared by the GPU kernel and the CPU model, so the model's tests check the GPU path's mapping.
"""

from ._c import MAX_RANK, PermuteDescC
from ._tensors import dense_strides  # noqa: F401 (the permute's callers take it from here)


def normalize_dims(dims, rank):
    """dims as non-negative indices; ValueError unless a permutation of range(rank)."""
    dims = [d + rank if d < 0 else d for d in dims]
    if sorted(dims) != list(range(rank)):
        raise ValueError(f"dims {tuple(dims)} is not a permutation of the {rank} dimensions")
    return dims


def permuted_shape(shape, dims):
    return tuple(shape[d] for d in dims)


def _kept_dims(shape, src_strides, dims, dst_strides):
    """Drop the dimensions of one element (they move no data and would spend rank): what remains of shape, strides
    and dims, renumbered."""
    kept = [i for i, size in enumerate(shape) if size != 1]
    if not kept:  # one element in all: one dimension of one element
        return [1], [1], [0], [1]
    new_index = {old: new for new, old in enumerate(kept)}
    kept_dims = [new_index[d] for d in dims if shape[d] != 1]
    kept_dst_strides = [dst_strides[j] for j, d in enumerate(dims) if shape[d] != 1]
    return [shape[i] for i in kept], [src_strides[i] for i in kept], kept_dims, kept_dst_strides


def _require_expressible(strides, sizes, which):
    for stride, size in zip(strides, sizes):
        if size > 1 and stride <= 0:
            raise ValueError(f"{which} has a stride of {stride} elements in a dimension of {size}: tma_permute takes "
                             "positive strides (a stride of 0, a broadcast, reads as 'dense' in tma_permute_desc); "
                             "make the tensor contiguous first")


def permute_desc(shape, src_strides, itemsize, dims, dst_strides, src_address, dst_address):
    """The tma_permute_desc of dst = src.permute(dims), dst with strides dst_strides (elements, in dst's dimension
    order). Raises ValueError for what the descriptor cannot say (rank above 5 once the dimensions of one element are
    dropped, non-positive strides)."""
    dims = normalize_dims(list(dims), len(shape))
    shape, src_strides, dims, dst_strides = _kept_dims(list(shape), list(src_strides), dims, list(dst_strides))
    rank = len(shape)
    _require_expressible(src_strides, shape, "src")
    _require_expressible(dst_strides, permuted_shape(shape, dims), "dst")
    # C's dimension 0 has no stride of its own (it is one element): where src's or dst's innermost dimension is not
    # contiguous, a dimension of one element goes first and every real one gets its stride.
    lead = 1 if (src_strides[-1] != 1 or dst_strides[-1] != 1) else 0
    if rank + lead > MAX_RANK:
        raise ValueError(f"tma_permute takes {MAX_RANK} dimensions; this permutation has {rank} of more than one "
                         f"element{' and a non-contiguous innermost one' if lead else ''}")
    c_src_sizes = [1] * lead + list(reversed(shape))
    c_src_strides = [1] * lead + list(reversed(src_strides))
    c_dst_strides = [1] * lead + list(reversed(dst_strides))
    # dst C dimension j (innermost first) is framework dst dimension rank-1-j, i.e. src dimension dims[rank-1-j],
    # which is src C dimension rank-1-dims[rank-1-j]
    c_perm = list(range(lead)) + [lead + rank - 1 - dims[rank - 1 - j] for j in range(rank)]
    d = PermuteDescC()
    d.elem_bytes = itemsize
    d.rank = rank + lead
    d.src = src_address
    d.dst = dst_address
    for i in range(rank + lead):
        d.src_dims[i] = c_src_sizes[i]
        d.perm[i] = c_perm[i]
        if i >= 1:
            d.src_strides[i - 1] = c_src_strides[i] * itemsize
            d.dst_strides[i - 1] = c_dst_strides[i] * itemsize
    return d


