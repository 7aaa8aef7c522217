"""How plots look, decided without drawing: a look per series, labels whole and in the unit
drawn."""

from harness.metric_names import MetricKey
from harness.render.plot_style import as_points, metric_axis, offsets, series_styles, wrapped
from harness.stats import Summary


def summary(median: float) -> Summary:
    return Summary(
        n=3,
        median=median,
        q1=median * 0.9,
        q3=median * 1.1,
        minimum=median * 0.8,
        maximum=median * 1.2,
    )


def test_no_two_series_look_alike_however_many():
    for count in (2, 10, 12, 24, 80):
        styles = series_styles(count)
        assert len(set(styles)) == count, count
    twelve = series_styles(12)
    assert len({s.colour for s in twelve}) == 10 and len({s.marker for s in twelve}) == 7
    assert len({(s.colour, s.marker) for s in twelve}) == 12, (
        "colour and marker alone tell twelve apart"
    )


def test_a_metric_is_named_without_its_ns_suffix_in_the_unit_it_is_drawn_in():
    label, scale = metric_axis(MetricKey("two_scans", "dispatch"), [summary(4.2e7)])
    assert (label, scale) == ("two_scans dispatch (ms)", 1e6)
    assert "_ns" not in label
    assert metric_axis(MetricKey("scan", "lower"), [summary(900.0)]) == ("scan lower (ns)", 1.0)
    assert metric_axis(MetricKey("json", "reg_ms"), [summary(12.0)]) == (
        "json.reg_ms (as printed)",
        1.0,
    )


def test_long_labels_are_wrapped_whole_never_cut():
    text = "median of process medians, wall (ms); bars: IQR between processes"
    lines = wrapped(text, 34).splitlines()
    assert len(lines) > 1 and all(len(line) <= 34 for line in lines)
    assert " ".join(lines) == text


def test_two_releases_are_points_side_by_side_more_are_a_line():
    assert as_points(["0.4.26", "0.12.0.1"]) and not as_points(["0.4.26", "0.4.30", "0.12.0.1"])
    spread = offsets(4, points=True)
    assert len(set(spread)) == 4 and spread == sorted(spread) and abs(sum(spread)) < 1e-9
    assert offsets(4, points=False) == [0.0] * 4 and offsets(1, points=True) == [0.0]


def test_a_description_breaks_between_its_parts():
    title = (
        "scan_sync: wall time by release · profile cpu · M=500 N=100 · cpu backend · 1 device · "
        "machine 5c19a97b"
    )
    lines = wrapped(title, 70).splitlines()
    assert lines == [
        "scan_sync: wall time by release · profile cpu · M=500 N=100",
        "cpu backend · 1 device · machine 5c19a97b",
    ]
