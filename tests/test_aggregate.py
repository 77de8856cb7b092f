"""The benchmark's aggregate statistics against values worked out by hand."""

from __future__ import annotations

import numpy as np
import pytest

from training.evaluation.aggregate import (
    iqm,
    mean_t_interval,
    performance_profile,
    probability_of_improvement,
    stratified_bootstrap_ci,
    stratified_resample,
)


def test_iqm_is_the_mean_of_the_middle_half():
    assert iqm(np.arange(1, 9)) == 4.5  # 8 scores: cut 2 each end, mean of 3, 4, 5, 6
    assert iqm(np.arange(1, 11)) == 5.5  # 10 scores: cut 2 each end, mean of 3..8
    assert iqm(np.array([[0.0, 100.0], [0.0, 0.0]])) == 0.0  # cut one each end: mean(0, 0)
    assert iqm(np.array([5.0, 1.0, 3.0])) == 3.0  # 3 scores: nothing cut
    # Runs x tasks, all pooled: sorted 1 2 3 4 6 7 8 9, the middle half 3 4 6 7.
    assert iqm(np.array([[1.0, 9.0, 2.0, 3.0], [4.0, 8.0, 7.0, 6.0]])) == 5.0
    with pytest.raises(ValueError, match="no scores"):
        iqm(np.array([]))


def test_resampling_stays_within_each_task():
    scores = np.array([[0.0, 10.0], [1.0, 11.0], [2.0, 12.0]])
    for seed in range(20):
        drawn = stratified_resample(scores, np.random.default_rng(seed))
        assert drawn.shape == scores.shape
        assert set(drawn[:, 0]) <= {0.0, 1.0, 2.0} and set(drawn[:, 1]) <= {10.0, 11.0, 12.0}


def test_bootstrap_interval_of_two_runs_spans_them():
    """One task, runs a=0 and b=1: a replicate is (a, a), (a, b) or (b, b) with chances
    1/4, 1/2, 1/4, so its mean is 0, 0.5 or 1; the 2.5th percentile is 0, the 97.5th 1."""
    point, low, high = stratified_bootstrap_ci(
        lambda s: float(s.mean()), np.array([[0.0], [1.0]]), reps=4000
    )
    assert (point, low, high) == (0.5, 0.0, 1.0)


def test_a_task_whose_runs_agree_adds_no_width():
    point, low, high = stratified_bootstrap_ci(iqm, np.full((5, 3), 0.25))
    assert point == low == high == 0.25


def test_bootstrap_interval_covers_the_point_and_shrinks_with_more_runs():
    rng = np.random.default_rng(0)
    few = rng.normal(0.5, 0.1, size=(5, 4))
    many = rng.normal(0.5, 0.1, size=(80, 4))
    point, low, high = stratified_bootstrap_ci(iqm, few)
    assert low <= point <= high
    _, low_many, high_many = stratified_bootstrap_ci(iqm, many)
    assert high_many - low_many < high - low


def test_probability_of_improvement_by_hand():
    # Task 1: x = (1, 2), y = (0, 3): 1>0, 1<3, 2>0, 2<3 -> 2 of 4 = 0.5.
    # Task 2: x = (5, 5), y = (5, 4): ties count a half: 0.5 + 1 + 0.5 + 1 -> 3 of 4 = 0.75.
    x = np.array([[1.0, 5.0], [2.0, 5.0]])
    y = np.array([[0.0, 5.0], [3.0, 4.0]])
    assert probability_of_improvement(x, y) == pytest.approx((0.5 + 0.75) / 2)
    assert probability_of_improvement(y, x) == pytest.approx(1 - (0.5 + 0.75) / 2)
    assert probability_of_improvement(x, x) == 0.5
    with pytest.raises(ValueError, match="same tasks"):
        probability_of_improvement(x, y[:, :1])
    point, low, high = stratified_bootstrap_ci(probability_of_improvement, x + 10, y)
    assert point == low == high == 1.0  # every run of x beats every run of y


def test_performance_profile_counts_runs_above_each_threshold():
    scores = np.array([[0.1, 0.4], [0.2, 0.9]])
    assert performance_profile(scores, [0.0, 0.15, 0.4, 1.0]).tolist() == [1.0, 0.75, 0.25, 0.0]


def test_t_interval_over_a_few_runs_by_hand():
    """Five runs: t(4) = 2.776, not the normal 1.96; one run: no interval."""
    mean, half = mean_t_interval([1.0, 2.0, 3.0, 4.0, 5.0])
    assert mean == 3.0 and half == pytest.approx(2.776445 * np.sqrt(2.5) / np.sqrt(5))
    assert mean_t_interval([1.5]) == (1.5, None)
