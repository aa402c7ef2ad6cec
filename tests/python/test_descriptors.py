"""Checks, explanations and errors: the Python package against libtma's own rules and messages."""

import ctypes

import pytest

import libtma
from libtma import Status, TiledDesc, Im2colDesc, TmaError
from libtma import _c


def test_status_enum_is_the_librarys_table():
    for status in Status:
        assert _c.lib.tma_status_name(status.value).decode() == "TMA_" + status.name, status
    assert Status.OK == 0 and Status.ERR_BOX_SWIZZLE_SPAN == 13 and Status.ERR_IM2COL_OFFSET == 43
    assert _c.lib.tma_status_name(len(Status)).decode() == "TMA_UNKNOWN_STATUS", "the enum stops before the end"


def test_valid_descriptor_has_no_violation():
    d = TiledDesc(dtype="bf16", dims=(4096, 4096), box=(64, 128), swizzle="128B")
    assert libtma.check(d) == []
    libtma.validate(d)  # raises if anything is wrong


def test_readme_descriptor_names_field_value_limit_and_fix():
    d = TiledDesc(dtype=libtma.Dtype.DTYPE_BF16, dims=(4096, 4096), strides=(8192,), box=(128, 64),
                  swizzle=libtma.Swizzle.SWIZZLE_128B)
    violations = libtma.check(d)
    assert [v.status for v in violations] == [Status.ERR_BOX_SWIZZLE_SPAN]
    assert violations[0].message == ("box_dim[0] = 128 bf16 elements = 256 bytes exceeds the 128-byte span of "
                                     "TMA_SWIZZLE_128B: use box_dim[0] <= 64 or split the box")


def test_every_broken_rule_is_reported_with_the_c_checkers_messages():
    d = TiledDesc(dtype="f32", dims=(100, 0, 7), strides=(404, 1000), box=(300, 1, 1), swizzle="64B",
                  element_strides=(1, 9, 1), address=0x1008)
    violations = libtma.check(d)
    c_desc = d.to_c()
    diags = (_c.DiagC * 64)()
    count = ctypes.c_size_t()
    _c.lib.tma_check_tiled_all(c_desc, diags, 64, ctypes.byref(count))
    want = [(Status(x.status), x.message.decode()) for x in diags[:count.value]]
    assert [(v.status, v.message) for v in violations] == want
    assert len(violations) >= 4, f"four rules at least are broken here: {violations}"
    statuses = {v.status for v in violations}
    for status in (Status.ERR_GLOBAL_ADDRESS_ALIGN, Status.ERR_GLOBAL_DIM, Status.ERR_GLOBAL_STRIDE_ALIGN,
                   Status.ERR_ELEMENT_STRIDE):
        assert status in statuses, f"{status.name} missing from {violations}"


def test_validate_raises_tma_error_with_every_violation():
    d = TiledDesc(dtype="f32", dims=(100, 0), strides=(404,), box=(300, 1))
    with pytest.raises(TmaError) as caught:
        libtma.validate(d)
    error = caught.value
    assert error.violations == libtma.check(d)
    assert error.status == error.violations[0].status
    assert error.status_name == "TMA_" + error.status.name
    assert str(error).startswith(f"{error.status_name} ({int(error.status)}): {error.message}")


def test_names_and_numbers_are_accepted_for_enum_fields():
    by_name = TiledDesc(dtype="TMA_DTYPE_F16", dims=(64, 64), box=(32, 8), swizzle="TMA_SWIZZLE_64B",
                        l2_promotion="128B", oob_fill="nan").to_c()
    by_number = TiledDesc(dtype=6, dims=(64, 64), box=(32, 8), swizzle=2, l2_promotion=2, oob_fill=1).to_c()
    assert bytes(by_name) == bytes(by_number)
    with pytest.raises(ValueError, match="is not a Swizzle"):
        TiledDesc(dtype="f16", dims=(64,), box=(8,), swizzle="96B").to_c()
    with pytest.raises(ValueError, match="no TMA element type"):
        libtma.descriptors.as_dtype("complex64")


def test_explain_gives_the_facts_and_why_stores_are_refused():
    view = TiledDesc(dtype="f32", dims=(64, 64), strides=(0,), box=(32, 8), store=False)
    explanation = libtma.explain(view)
    assert explanation.valid and explanation.loads is None
    assert explanation.stores is not None and explanation.stores.status == Status.ERR_GLOBAL_STRIDE_OVERLAP
    dense = libtma.explain(TiledDesc(dtype="bf16", dims=(4096, 4096), box=(64, 128), swizzle="128B"))
    assert dense.facts["tx_bytes"] == 64 * 128 * 2 and dense.facts["row_pitch"] == 128
    assert dense.facts["rows"] == 128 and dense.facts["smem_bytes"] == 128 * 128
    assert dense.facts["extent_bytes"] == 4096 * 4096 * 2 and dense.facts["swizzle_period"] == 1024
    assert "stores: yes" in str(dense)
    narrow = TiledDesc(dtype="f32", dims=(10, 10), box=(4, 4), swizzle="64B").footprint()
    assert narrow["row_pitch"] == 64, "a swizzled row occupies the whole span"
    assert narrow["extent_bytes"] == 9 * 40 + 48, "the last row ends on a 16-byte chunk"


def test_im2col_check_and_explain():
    good = Im2colDesc(dtype="bf16", dims=(64, 56, 56, 32), channels=64, pixels=128, lower=(-1, -1), upper=(-1, -1),
                      swizzle="128B")
    assert libtma.check(good) == []
    explanation = libtma.explain(good)
    assert explanation.facts["tx_bytes"] == 64 * 2 * 128 == good.footprint()["tx_bytes"]
    # 4 bf16 channels: 8-byte pixels (the stride and a copy's row must be 16-byte multiples); 2000 pixels > 1024
    bad = Im2colDesc(dtype="bf16", dims=(4, 56, 56, 32), channels=4, pixels=2000)
    statuses = [v.status for v in libtma.check(bad)]
    assert sorted(statuses) == [Status.ERR_GLOBAL_STRIDE_ALIGN, Status.ERR_BOX_INNER_BYTES,
                                Status.ERR_IM2COL_PIXELS], statuses


def test_encode_needs_an_address():
    with pytest.raises(ValueError, match="device address"):
        libtma.encode(TiledDesc(dtype="f32", dims=(64, 64), box=(32, 8)))


def test_a_mirror_that_differs_from_c_is_named():
    class DriftedDiag(ctypes.Structure):
        _c_name_ = "tma_diag"
        _fields_ = [("status", ctypes.c_int64), ("message", ctypes.c_char * 512), ("extra", ctypes.c_int)]

    differences = _c._mirror_differences(DriftedDiag, _c._read_layout_table())
    assert any("tma_diag: the mirror has size" in line for line in differences), differences
    assert any(line.startswith("tma_diag.message: offset 8") for line in differences), differences
    assert "tma_diag.extra: in the mirror, not in the C struct" in differences


def test_every_mirror_matches_its_c_struct():
    table = _c._read_layout_table()
    for mirror in _c.MIRRORS:
        assert _c._mirror_differences(mirror, table) == [], mirror._c_name_


def test_conv2d_check_without_a_gpu():
    assert libtma.conv2d_output_size((2, 56, 56, 64), (128, 3, 3, 64), stride=1, padding=1) == (2, 56, 56, 128)
    assert libtma.conv2d_output_size((1, 7, 9, 8), (4, 3, 3, 8), stride=2, dilation=(1, 2)) == (1, 3, 3, 4)
    libtma.conv2d_check((2, 56, 56, 64), (128, 3, 3, 64), padding=1)
    with pytest.raises(TmaError) as caught:
        libtma.conv2d_check((2, 56, 56, 64), (128, 3, 3, 64), stride=9)
    assert caught.value.status == Status.ERR_ARG and "stride" in caught.value.message


ENCODE_SCRIPT = """
import libtma
tiled = libtma.TiledDesc(dtype="bf16", dims=(4096, 4096), box=(64, 128), swizzle="128B", address=0x7f0000000000)
t = libtma.encode(tiled)
im2col = libtma.Im2colDesc(dtype="bf16", dims=(64, 56, 56, 32), channels=64, pixels=128, lower=(-1, -1),
                           upper=(-1, -1), swizzle="128B", address=0x7f0000000000)
i = libtma.encode(im2col)
print(t.map == bytes([0x5A]) * 128, len(t.tensor))
print(t.map == t.tensor[:128], t.box["tx_bytes"], t.box["row_pitch"], i.box["tx_bytes"], i.map == bytes([0x5A]) * 128)
try:
    libtma.encode(libtma.TiledDesc(dtype="bf16", dims=(4096, 4096), box=(128, 64), swizzle="128B", address=4096))
except libtma.TmaError as error:
    print(error.status_name)
"""


def test_encode_through_a_stand_in_driver():
    """libtma.encode checks, calls the driver (tests/fake_libcuda.c, which writes 0x5a bytes) and returns the map with
    its box facts. In a process of its own: the driver library is opened once per process."""
    import os
    import subprocess
    import sys
    fake = os.environ.get("TMA_FAKE_LIBCUDA")
    if not fake:
        pytest.skip("TMA_FAKE_LIBCUDA (the stand-in driver, build/tests/libfake_libcuda.so) is not set; ctest sets it")
    result = subprocess.run([sys.executable, "-c", ENCODE_SCRIPT], env=dict(os.environ, TMA_LIBCUDA=fake),
                            capture_output=True, text=True, check=True)
    lines = result.stdout.split("\n")
    assert lines[0] == "True 256", result.stdout
    assert lines[1] == f"True {64 * 128 * 2} 128 {64 * 2 * 128} True", result.stdout
    assert lines[2] == "TMA_ERR_BOX_SWIZZLE_SPAN", result.stdout
