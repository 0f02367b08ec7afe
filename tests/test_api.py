"""The Python API: ``raidlab.Array`` and the exception classes."""

from __future__ import annotations

import pytest

import raidlab


def test_array_properties():
    array = raidlab.Array(level=5, devices=4, chunk_kib=64, member_kib=6144)
    assert array.level == 5
    assert array.layout == "left-symmetric"
    assert array.devices == 4
    assert array.chunk_kib == 64
    assert array.member_kib_list == (6144,) * 4
    assert array.capacity_bytes == 3 * 6144 * 1024
    assert array.io_min_bytes == 64 * 1024
    assert array.io_opt_bytes == 3 * 64 * 1024
    assert array.copies == 1
    assert array.member_chunks == (96,) * 4
    assert "left-symmetric" in repr(array)


def test_map_table_and_rows():
    array = raidlab.Array(level=5, devices=4, chunk_kib=64, member_kib=6144)
    table = array.map_table()
    assert [len(column) for column in table] == [96] * 4
    assert [column[0] for column in table] == [0, 1, 2, "P"]
    assert array.map_table(rows=2) == [column[:2] for column in table]


def test_defaults_are_mdadms():
    array = raidlab.Array(level="raid10", devices=2)
    assert array.layout == "n2"
    assert array.chunk_kib == raidlab.DEFAULT_CHUNK_KIB == 512
    assert array.member_kib_list == (raidlab.DEFAULT_MEMBER_KIB,) * 2 == (1048576,) * 2
    assert raidlab.Array(level=1, devices=2).layout is None
    assert raidlab.Array(level=0, devices=2).layout == "original"


def test_q_log_coeff_for_raid6_only():
    array = raidlab.Array(level=6, devices=4, chunk_kib=64, member_kib=256)
    q = array.q_log_coeff()
    assert [column[0] for column in q] == [None, 0, 1, None]
    with pytest.raises(raidlab.RequestError):
        raidlab.Array(level=5, devices=4, chunk_kib=64, member_kib=256).q_log_coeff()


def test_raid0_zones():
    array = raidlab.Array(level=0, chunk_kib=64, member_kib_list=[7168, 11264, 15360])
    assert array.raid0_zones() == [(0, 112, (0, 1, 2)), (112, 176, (1, 2)), (176, 240, (2,))]
    assert raidlab.Array(level=0, devices=3, chunk_kib=64, member_kib=7168).raid0_zones() == [
        (0, 112, (0, 1, 2))
    ]
    assert raidlab.Array(level=5, devices=3).raid0_zones() == []


ERROR_CLASSES = ("ArrayError", "LayoutError", "RequestError", "DataLossError", "DeviceError",
                 "WorkloadError", "ConfigError")


def test_exception_hierarchy():
    kinds = {getattr(raidlab, name) for name in ERROR_CLASSES}
    assert len(kinds) == len(ERROR_CLASSES)
    for kind in kinds:
        assert issubclass(kind, raidlab.RaidlabError)
        assert kind.__doc__
    assert issubclass(raidlab.RaidlabError, Exception)
    from raidlab.errors import ArrayError

    assert ArrayError is raidlab.ArrayError


@pytest.mark.parametrize(
    "kwargs, error",
    [
        (dict(level=6, devices=3), raidlab.ArrayError),
        (dict(level=5, devices=4, layout="f2"), raidlab.LayoutError),
        (dict(level=5, devices=4, chunk_kib=48), raidlab.ArrayError),
        (dict(level=5, devices=-1), raidlab.ArrayError),
        (dict(level=5, devices=4, chunk_kib=-64), raidlab.ArrayError),
        (dict(level=5, devices=4, chunk_kib=2**70), raidlab.ArrayError),
        (dict(level=5, devices=4, chunk_kib="64"), raidlab.ArrayError),
        (dict(level=5, devices=True), raidlab.ArrayError),
        (dict(level=5.0, devices=4), raidlab.ArrayError),
        (dict(level=5, devices=4, layout=2), raidlab.ArrayError),
        (dict(level=5, devices=10**9), raidlab.ArrayError),
        (dict(level=5), raidlab.ArrayError),
        (dict(level=5, devices=3, member_kib_list=[1024] * 4), raidlab.ArrayError),
        (dict(level=5, member_kib=1024, member_kib_list=[1024] * 3), raidlab.ArrayError),
        (dict(level=5, member_kib_list="1024,1024"), raidlab.ArrayError),
        (dict(level=5, member_kib_list=[1024, -1]), raidlab.ArrayError),
        (dict(level=9, devices=4), raidlab.ArrayError),
    ],
)
def test_bad_arguments_raise_raidlab_errors(kwargs, error):
    with pytest.raises(error) as caught:
        raidlab.Array(**kwargs)
    assert "\n" not in str(caught.value)


def test_large_map_is_built_quickly():
    import time

    array = raidlab.Array(level=6, devices=16, chunk_kib=64, member_kib=1024 * 1024)
    started = time.perf_counter()
    table = array.map_table()
    elapsed = time.perf_counter() - started
    assert sum(len(column) for column in table) == 16 * 16384
    assert elapsed < 5, f"map of 262144 cells took {elapsed:.2f} s"


def test_package_docstring_examples():
    import doctest

    failures, tried = doctest.testmod(raidlab)
    assert tried > 0 and failures == 0
