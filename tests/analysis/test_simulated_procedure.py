"""The whole verdict procedure against its promise, on simulated processes: looks, spending,
futility, sides that settle while their neighbours go on, a triage's screen and confirmation, and
claim flips (``simulated_runs``).

Where nothing changed, every design must flag a change in at most α of runs, beyond which the
binomial bound of the runs simulated says the procedure breaks its promise; the same check of a
design known to break it (three processes a side on a two-level host, without the rank guard) fails,
so the check can fail.
"""

import random
import zlib
from dataclasses import replace

import pytest

from harness.analysis.claims import flip_chance
from harness.analysis.processes import UPPER_ESTIMATE
from harness.analysis.significance import Thresholds, Verdict
from tests.analysis.simulated_runs import (
    Noise,
    binomial_upper,
    pairwise,
    rates,
    settings_of,
    triage_run,
)

RULE = Thresholds()
RUNS = 400
NOISES = {
    "lognormal": Noise("lognormal", 0.10),
    "heavy-tailed": Noise("t3", 0.10),
    "two-level": Noise("two-level", 0.05, slow=0.5),
}
DESIGNS = {
    "run --sides (5, at most 20)": (settings_of(5, 20), 2),
    "matrix (5, at most 10)": (settings_of(5, 10), 2),
    "bisect probe: good, probe, bad (unbalanced)": (settings_of(5, 20), 3),
}


@pytest.mark.parametrize("design", DESIGNS)
@pytest.mark.parametrize("noise", NOISES)
def test_where_nothing_changed_a_change_is_flagged_in_at_most_alpha_of_runs(design, noise):
    settings, sides = DESIGNS[design]
    seed = zlib.crc32(f"{design} {noise}".encode())
    found = rates(pairwise([1.0] * sides, NOISES[noise], settings, RULE), RUNS, seed=seed)
    # Each run makes sides - 1 comparisons, each held to α.
    assert found.flagged <= binomial_upper((sides - 1) * RULE.alpha, RUNS), (
        design,
        noise,
        found.flagged,
    )


def test_the_check_fails_a_design_that_cannot_hold_alpha():
    """Three processes a side and Welch's test alone (``--decide off``, the matrix's first look
    before): three fast processes against three slow ones, which a host with two levels gives in 3 %
    of A/A runs, pass it."""
    unguarded = replace(RULE, rank_guard=False)
    two_levels = Noise("two-level", 0.02, slow=0.5)
    found = rates(
        pairwise([1.0, 1.0], two_levels, settings_of(3, None, None), unguarded), RUNS, seed=5
    )
    assert found.flagged > binomial_upper(RULE.alpha, RUNS), found.flagged


def test_a_true_change_is_found_and_a_modest_one_shown_as_an_upper_estimate():
    clear = rates(
        pairwise([1.0, 1.5], Noise("lognormal", 0.10), settings_of(5, 20), RULE), 100, seed=3
    )
    assert clear.rate >= 0.95 and abs(clear.mean_ratio() / 1.5 - 1) < 0.03, (
        clear.rate,
        clear.mean_ratio(),
    )
    outcome = pairwise([1.0, 1.1], Noise("lognormal", 0.10), settings_of(5, 20), RULE)
    modest = rates(outcome, 300, seed=4)
    # At 10 % spread a ×1.10 is found in about a third of runs within 20 processes a side (a fixed
    # 20: 38 %); those that pass read high, which their flag says.
    assert modest.rate >= 0.25, modest.rate
    rng = random.Random(5)
    flagged = [c for _ in range(60) for c in outcome(rng) if c.verdict == Verdict.SLOWER]
    upper = [UPPER_ESTIMATE in c.flags for c in flagged]
    assert flagged and sum(upper) >= 0.8 * len(upper), (
        "they read high, and nearly all say so (96 % in 500 runs)"
    )


def test_a_triage_confirms_no_step_where_no_release_changed_beyond_its_family_bound():
    candidates = confirmed = 0
    rng = random.Random(7)
    for _ in range(150):
        found = triage_run([1.0] * 5, NOISES["two-level"], 5, 20, RULE, rng)
        candidates += found.candidates
        confirmed += len(found.confirmed)
    assert candidates > 0, (
        "the screen, at 0.01 without the rank guard, does pick candidates to measure again"
    )
    assert confirmed <= binomial_upper(RULE.alpha, candidates), (confirmed, candidates)


@pytest.mark.parametrize("chance", [0.5, 0.8, 0.9])
def test_a_claim_flip_is_confirmed_where_nothing_changed_at_most_as_often_as_its_bound(chance):
    rng = random.Random(int(chance * 10))
    pairs = flipped = 0
    for _ in range(400):
        found = triage_run(
            [1.0] * 3, Noise("lognormal", 0.01), 5, 5, RULE, rng, claim_chance=chance
        )
        pairs += 2
        flipped += found.claims_confirmed
    bound = flip_chance((5, 5), (5, 5))
    assert bound < RULE.alpha and flipped <= binomial_upper(bound, pairs), (flipped, pairs, bound)


def test_a_true_step_is_confirmed_by_the_triage():
    rng = random.Random(11)
    found = [
        triage_run([1.0, 1.0, 1.5, 1.5], NOISES["lognormal"], 5, 20, RULE, rng) for _ in range(20)
    ]
    hits = sum(any(c.verdict == Verdict.SLOWER for c in run.confirmed) for run in found)
    assert hits >= 18, hits
