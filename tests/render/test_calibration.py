import dataclasses

from harness.render.calibration import noise_floor_sentence
from harness.store.calibrations import CalibrationRun

RUN = CalibrationRun(
    created_at="2026-06-01T12:00:00+00:00",
    machine="1a2b3c4d5e6f7a8b",
    release="0.12.0.1",
    profile="cpu",
    case="scan_sync",
    sizes={"N": 600, "M": 2},
    pairs=3,
    comparisons=24,
    flagged=1,
    raised="N",
    raised_from=600,
    raised_to=660,
    slowdown_comparisons=8,
    slowdown_flagged=6,
    smallest_flagged_ratio=1.2149,
    largest_unflagged_ratio=1.04,
    processes=5,
    min_processes=3,
)


def test_the_noise_floor_in_one_sentence():
    assert noise_floor_sentence(RUN) == (
        "Noise floor of machine 1a2b3c4d (calibrated 2026-06-01 with scan_sync M=2 N=600 on jax "
        "0.12.0.1): 1 of 24 metric comparisons between 3 pairs of separate runs of one release got "
        "a verdict (4.2%); raising N from 600 to 660 was flagged slower in 6 of 8 metric "
        "comparisons, from ×1.21 up."
    )
    interleaved = dataclasses.replace(RUN, slowdown_runs=3)
    assert (
        "raising N from 600 to 660 (measured interleaved with the unchanged case, 3 runs) was "
        "flagged" in (noise_floor_sentence(interleaved))
    )


def test_a_slowdown_flagged_everywhere_or_nowhere():
    everywhere = dataclasses.replace(RUN, slowdown_flagged=8, largest_unflagged_ratio=None)
    assert "flagged slower in all 8 metric comparisons, from ×1.21 up." in noise_floor_sentence(
        everywhere
    )
    nowhere = dataclasses.replace(RUN, slowdown_flagged=0, smallest_flagged_ratio=None)
    assert noise_floor_sentence(nowhere).endswith(
        "raising N from 600 to 660 was not flagged (ratios up to ×1.04)."
    )


def test_too_few_processes_are_named_as_the_reason():
    single = dataclasses.replace(
        RUN, pairs=1, flagged=0, slowdown_flagged=0, smallest_flagged_ratio=None, processes=1
    )
    text = noise_floor_sentence(single)
    assert "between 1 pair of separate runs" in text and "got a verdict (0.0%)" in text
    assert text.endswith("(runs of 1 process a side: too few for any verdict, 3 are needed).")


def test_nothing_compared_says_so():
    empty = dataclasses.replace(
        RUN,
        comparisons=0,
        flagged=0,
        slowdown_comparisons=0,
        slowdown_flagged=0,
        smallest_flagged_ratio=None,
        largest_unflagged_ratio=None,
    )
    text = noise_floor_sentence(empty)
    assert (
        "no metric could be compared between 3 pairs" in text
        and "660 could not be compared" in text
    )


def test_the_detectable_ratio_is_quoted_with_the_processes_it_assumes():
    text = noise_floor_sentence(dataclasses.replace(RUN, detectable_ratio=1.7))
    assert (
        "at 5 processes a side, the spread between processes here lets the rule see changes from "
        "about ×1.7" in text
    )
    assert "(in 90% of comparisons; median over metrics)" in text
    assert "lets the rule see" not in noise_floor_sentence(RUN)


def test_the_spread_between_runs_is_quoted_with_the_option_that_takes_it():
    quiet = noise_floor_sentence(dataclasses.replace(RUN, invocation_spread=0.0412))
    assert (
        "the level of a whole run moved by 4.1% between separate runs (log standard deviation, "
        "from 3 pairs" in quiet
    )
    assert "within compare's default 0.1)" in quiet and "--invocation-spread" not in quiet
    more = noise_floor_sentence(dataclasses.replace(RUN, invocation_spread=0.1412))
    assert "more than compare's default 0.1: pass `--invocation-spread 0.141`" in more
    loaded = noise_floor_sentence(dataclasses.replace(RUN, invocation_spread=0.12, aa_loaded=True))
    assert (
        "moved by 12.0% between separate runs under load" in loaded and "get no verdict" in loaded
    )
    assert "--invocation-spread" not in loaded
    assert "moved by" not in noise_floor_sentence(RUN)
