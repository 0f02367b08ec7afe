"""report.steady's default criterion on made-up series: a flat window counts only if the rest
of the run stays at its level, and the running-sum search agrees with a plain one."""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from raidlab.report.steady import DEFAULT_REST_PCT, DEFAULT_SLOPE_PCT, DEFAULT_WINDOW_S, _slope_pct, steady_state


def found(series):
    return steady_state({"timeline": [{"read_iops": v, "write_iops": 0.0} for v in series]})


def plain_search(series):
    """The rule written out directly: every candidate's rest of the run summed afresh."""
    w = DEFAULT_WINDOW_S
    for start in range(len(series) - w + 1):
        window = series[start:start + w]
        slope = _slope_pct(window)
        if slope is None or slope > DEFAULT_SLOPE_PCT:
            continue
        rest = series[start:]
        rest_mean, window_mean = sum(rest) / len(rest), sum(window) / w
        if abs(rest_mean - window_mean) <= DEFAULT_REST_PCT / 100 * window_mean:
            return float(start), rest_mean
    return None


def test_a_flat_fill_then_a_step_down_is_judged_by_the_level_that_lasts():
    # 12 s of cache fill at 3,400, then 30 s at 650: the fill is flat for longer than the window
    # but the run does not stay there.
    result = found([3400.0] * 12 + [650.0] * 30)
    assert result is not None and result["from_s"] == 12 and result["iops"] == 650.0


def test_a_flat_run_is_steady_from_its_start():
    result = found([1000.0, 1010.0] * 10)
    assert result["from_s"] == 0 and result["iops"] == 1005.0


def test_a_run_that_keeps_falling_or_is_shorter_than_the_window_never_settles():
    assert found([1000.0 * 0.97 ** t for t in range(40)]) is None
    assert found([1000.0] * (DEFAULT_WINDOW_S - 1)) is None


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([0.0, 600.0, 640.0, 650.0, 660.0, 700.0, 3400.0]), max_size=40))
def test_the_running_sum_search_agrees_with_the_plain_one(series):
    result = found(series)
    expected = plain_search(series)
    if expected is None:
        assert result is None
    else:
        assert result is not None and result["from_s"] == expected[0]
        assert abs(result["iops"] - expected[1]) <= 1e-9 * max(1.0, expected[1])
