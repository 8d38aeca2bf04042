"""The block sketches that guess where the certified DP-SGD composition cuts its tails.

The guess affects only speed (the cuts are found on exact integer sums), so a wrong
sketch shows up as work, not as a wrong bound: before these tests the sketch treated
every block as uniform, drifted by up to half a block per step and lost its mass to the
clipping, the cuts were then guessed nowhere and the tails never cut (MNIST's DP-SGD,
q = 256/60000, sigma = 0.7, 10547 steps, grew to 4.5 million grid points instead of 0.23
million: 19 s instead of 5.7 s in one run on the shared machine).  No assertion on time:
on sizes, masses and means.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from symgdp.training.engine import (
    _clip,
    _sketch_product,
    _Tracked,
    compose_schedule,
    one_step_pmfs,
    one_step_tail,
)

Q, SIGMA = 256 / 60000, 0.7  # tensorflow/privacy's MNIST tutorial, sigma 0.7


def _one_step(disc: float, steps: int):
    return one_step_pmfs(Q, SIGMA, disc, one_step_tail(1e-10, steps), 80, "add_remove",
                         False).directions[0]


def _mass_mean(sk) -> tuple[float, float]:
    b, s, m, r = sk
    k = np.arange(m.size, dtype=np.float64)
    tot = float(m.sum())
    return tot, float(np.sum(m * (s + k) * b + r)) / tot


def test_sketch_keeps_mass_and_mean_over_squarings():
    # reference: the exact law of a 2^11-fold sum has 2^11 times the one-step mean (grid
    # index), computed here from the one-step masses directly (float64, no sketch)
    pmf = _one_step(1e-3, 2048)
    p = np.asarray(pmf.approx, dtype=np.float64)
    idx = pmf.lower + np.arange(p.size, dtype=np.float64)
    mean1 = float(np.sum(p * idx) / np.sum(p))
    sk = _Tracked(pmf).coarse
    for _ in range(11):
        sk = _sketch_product(sk, sk)
    tot, mean = _mass_mean(sk)
    b = sk[0]
    assert tot == pytest.approx(float(np.sum(p)) ** 2048, rel=1e-9)
    # the block centres are kept exactly, so only float rounding moves the mean: far
    # below one block (the uniform-block sketch was off by about 2^10 blocks)
    assert abs(mean - 2048 * mean1) < 0.01 * b


def test_clip_folds_what_it_drops():
    # reference: the sum of the input masses (nothing may vanish from a sketch)
    b, s = 4, -3
    m = np.array([1e-3, 0.2, 0.5, 0.29, 9e-3, 1e-3])
    r = 0.5 * b * m
    out = _clip((b, s, m, r), -2, 5)  # keeps the blocks meeting indices [-2, 5)
    assert float(out[2].sum()) == pytest.approx(float(m.sum()), rel=1e-15)
    assert np.all(out[3] >= 0) and np.all(out[3] <= (out[0] - 1) * out[2] + 1e-300)


def test_long_run_support_is_cut_to_the_clt_width():
    # reference: the composed loss has standard deviation sqrt(T) times the one-step one
    # (variance of a sum of independent terms), computed from the one-step masses; the
    # cuts drop at most the tail (1e-19, about 9 standard deviations each side), so the
    # kept support is at most one step's width plus 2 * 12 standard deviations.  Before
    # the sketch kept its centres of mass it kept 77159 points here (no right cut at all)
    disc, steps = 1e-3, 2000
    pmf = _one_step(disc, steps)
    p = np.asarray(pmf.approx, dtype=np.float64)
    i = np.arange(p.size, dtype=np.float64)
    p = p / p.sum()
    sd = math.sqrt(float(np.sum(p * (i - np.sum(p * i)) ** 2)))
    comp = compose_schedule([(Q, SIGMA, steps)], disc, 1e-10)
    size = comp.pmfs[0].size
    assert size <= pmf.size + 24 * sd * math.sqrt(steps), (size, sd)
