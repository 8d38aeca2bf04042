r"""Empirical privacy audits: lower bounds on :math:`\mu` (and :math:`\varepsilon`) from an
attack's confusion counts.

An attack run many times on the two neighbouring datasets :math:`S` (negatives) and
:math:`S'` (positives) of a mechanism, each run an independent execution, and thresholded
at one or several levels, gives per threshold the counts ``tp``, ``fn`` (runs on
:math:`S'`) and ``fp``, ``tn`` (runs on :math:`S`).  :func:`audit` turns them into a lower
bound that holds with probability at least ``confidence`` over the runs:

1. one-sided Clopper–Pearson bounds (Clopper & Pearson 1934), a lower bound
   :math:`\underline{\mathrm{TPR}}` and an upper bound :math:`\overline{\mathrm{FPR}}` per
   threshold, each at level :math:`(1 - c)/(2m)` for :math:`m` thresholds (a union bound
   over the :math:`2m` statements, Bonferroni);
2. the GDP reading: a :math:`\mu`-GDP mechanism has :math:`\mathrm{TPR} \le
   1 - G_\mu(\mathrm{FPR}) = \Phi(\Phi^{-1}(\mathrm{FPR}) + \mu)` for every test (Dong,
   Roth & Su 2021, Def. 2.6), so
   :math:`\mu \ge \Phi^{-1}(\underline{\mathrm{TPR}}) - \Phi^{-1}(\overline{\mathrm{FPR}})`;
3. the :math:`(\varepsilon, \delta)` reading: :math:`\mathrm{TPR} \le e^\varepsilon
   \mathrm{FPR} + \delta` and :math:`1 - \mathrm{FPR} \le e^\varepsilon(1 - \mathrm{TPR})
   + \delta` (Kairouz, Oh & Viswanath 2015), so :math:`\varepsilon \ge
   \max\{\log\frac{\underline{\mathrm{TPR}} - \delta}{\overline{\mathrm{FPR}}},
   \log\frac{1 - \overline{\mathrm{FPR}} - \delta}{1 - \underline{\mathrm{TPR}}}\}`.

The bound is the largest over the thresholds, clamped at 0.  The neighbouring relation is
whatever relates the two datasets the attack was run on.

:func:`audit_one_run` is the one-run audit of Steinke, Nasr & Jagielski (2023), read in
GDP as well as in :math:`(\varepsilon, \delta)`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from symgdp.errors import DomainError

__all__ = ["AuditResult", "audit", "OneRunResult", "audit_one_run"]

_REL = 1e-12  # outward nudge of the scipy quantiles (accurate to ~1e-15 relative)


@dataclass(frozen=True, slots=True)
class AuditResult:
    r"""The result of :func:`audit`.

    Attributes:
        mu_lower: a lower bound on the GDP parameter :math:`\mu` of the mechanism, holding
            with probability at least ``confidence``.
        eps_lower: a lower bound on :math:`\varepsilon` at ``delta`` (None without delta).
        confidence: the confidence level.
        delta: the :math:`\delta` of ``eps_lower`` (or None).
        tpr_lower: per threshold, the Clopper–Pearson lower bound of the TPR.
        fpr_upper: per threshold, the Clopper–Pearson upper bound of the FPR.
        best: the index of the threshold giving ``mu_lower``.
    """

    mu_lower: float
    eps_lower: float | None
    confidence: float
    delta: float | None
    tpr_lower: tuple[float, ...]
    fpr_upper: tuple[float, ...]
    best: int


def _confidence(confidence: Any) -> float:
    """The confidence level as a float in (0, 1), else a DomainError naming it."""
    c = float(confidence) if isinstance(confidence, (int, float)) and not isinstance(
        confidence, bool) else float("nan")
    if not 0.0 < c < 1.0:
        raise DomainError(f"confidence must lie in (0, 1), got {confidence!r}")
    return c


def _delta(delta: Any) -> float | None:
    """``delta`` as a float in [0, 1) (``None`` stays ``None``), else a DomainError."""
    if delta is None:
        return None
    d = float(delta) if isinstance(delta, (int, float)) and not isinstance(
        delta, bool) else float("nan")
    if not 0.0 <= d < 1.0:
        raise DomainError(f"delta must lie in [0, 1), got {delta!r}")
    return d


def _counts(name: str, v: Any) -> np.ndarray:
    a = np.atleast_1d(np.asarray(v, dtype=object))
    out = np.empty(a.shape, dtype=np.int64)
    for i, x in enumerate(a.flat):
        ok = isinstance(x, (int, np.integer)) and not isinstance(x, bool)
        if not ok and isinstance(x, (float, np.floating)) and math.isfinite(x) \
                and float(x).is_integer():
            ok = True
        if not ok:
            raise DomainError(f"{name} must be a non-negative integer count, got {x!r}")
        if x < 0:
            raise DomainError(f"{name} must be a non-negative integer count, got {x!r}")
        out.flat[i] = int(x)
    return out.ravel()


def audit(*, tp: Any, fn: Any, fp: Any, tn: Any, confidence: float = 0.95,
          delta: float | None = None) -> AuditResult:
    r"""Lower bounds on :math:`\mu` (and :math:`\varepsilon` at ``delta``) from confusion
    counts, valid with probability at least ``confidence`` (see the module docstring).

    Args:
        tp, fn: per threshold, the runs on :math:`S'` flagged positive / negative.
        fp, tn: per threshold, the runs on :math:`S` flagged positive / negative.
        confidence: in (0, 1).
        delta: :math:`\delta \in [0, 1)` for ``eps_lower``.

    Raises:
        DomainError: a negative or non-integer count, no runs on one of the datasets, a
            confidence outside (0, 1), or a delta outside [0, 1).

    Example:
        >>> r = audit(tp=900, fn=100, fp=100, tn=900, confidence=0.95)
        >>> 2.2 < r.mu_lower < 2.563  # Phi^{-1}(0.9) - Phi^{-1}(0.1) = 2.563 at the MLE
        True
    """
    c = _confidence(confidence)
    d = _delta(delta)
    tp_, fn_, fp_, tn_ = (_counts(n, v) for n, v in
                          (("tp", tp), ("fn", fn), ("fp", fp), ("tn", tn)))
    m = tp_.size
    if not (fn_.size == fp_.size == tn_.size == m):
        raise DomainError(f"tp, fn, fp, tn must have the same length, got "
                          f"{tp_.size}, {fn_.size}, {fp_.size}, {tn_.size}")
    pos, neg = tp_ + fn_, fp_ + tn_
    if np.any(pos == 0):
        raise DomainError(f"tp + fn must be > 0 (no runs on the positive dataset) at "
                          f"threshold {int(np.argmax(pos == 0))}")
    if np.any(neg == 0):
        raise DomainError(f"fp + tn must be > 0 (no runs on the negative dataset) at "
                          f"threshold {int(np.argmax(neg == 0))}")
    from scipy import special, stats

    level = (1.0 - c) / (2 * m)
    with np.errstate(all="ignore"):
        tpr = np.where(tp_ > 0, stats.beta.ppf(level, tp_, fn_ + 1), 0.0)
        fpr = np.where(fp_ < neg, stats.beta.ppf(1.0 - level, fp_ + 1, tn_), 1.0)
    tpr = np.clip(np.nan_to_num(tpr, nan=0.0) * (1 - _REL), 0.0, 1.0)
    fpr = np.clip(np.nan_to_num(fpr, nan=1.0) * (1 + _REL) + 1e-300, 0.0, 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        mus = special.ndtri(tpr) - special.ndtri(fpr)
    mus = np.where(np.isnan(mus), 0.0, mus)
    mus = mus - _REL * (1 + np.abs(mus))
    best = int(np.argmax(mus))
    mu_lower = max(float(mus[best]), 0.0)
    eps_lower = None
    if d is not None:
        with np.errstate(divide="ignore", invalid="ignore"):
            e1 = np.log((tpr - d) / fpr)
            e2 = np.log((1.0 - fpr - d) / (1.0 - tpr))
        e = np.fmax(np.where(np.isnan(e1), -np.inf, e1), np.where(np.isnan(e2), -np.inf, e2))
        e = e - _REL * (1 + np.abs(np.where(np.isfinite(e), e, 0.0)))
        eps_lower = max(float(np.max(e)), 0.0)
    return AuditResult(mu_lower, eps_lower, c, d, tuple(float(v) for v in tpr),
                       tuple(float(v) for v in fpr), best)


# -- one-run audit ---------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class OneRunResult:
    r"""The result of :func:`audit_one_run`.

    Attributes:
        mu_lower: a lower bound on :math:`\mu`, holding with probability at least
            ``confidence``.
        eps_lower: a lower bound on :math:`\varepsilon` at ``delta`` (None without delta).
        confidence: the confidence level.
        delta: the :math:`\delta` of ``eps_lower`` (or None).
    """

    mu_lower: float
    eps_lower: float | None
    confidence: float
    delta: float | None


def _one_run_terms(r: int, v: int, eps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r"""Per :math:`\varepsilon`: :math:`\beta = P[\mathrm{Bin}(r, q) \ge v]` and
    :math:`\alpha = \max_{1 \le i \le v} \frac1i P[v - i \le \mathrm{Bin}(r, q) < v]`,
    :math:`q = e^\varepsilon/(1 + e^\varepsilon)`."""
    from scipy import special, stats

    q = special.expit(eps)[:, None]
    beta = stats.binom.sf(v - 1, r, q[:, 0])
    if v == 0:
        return beta, np.zeros_like(beta)
    ks = np.arange(v - 1, -1, -1)[None, :]           # v - i for i = 1..v
    pmf = stats.binom.pmf(ks, r, q)
    alpha = np.max(np.cumsum(pmf, axis=1) / np.arange(1, v + 1)[None, :], axis=1)
    return beta, alpha


def audit_one_run(*, m: int, r: int, v: int, confidence: float = 0.95,
                  delta: float | None = None) -> OneRunResult:
    r"""The one-run audit of Steinke, Nasr & Jagielski (2023): lower bounds on
    :math:`\mu` (and on :math:`\varepsilon` at ``delta``) from a single run of the
    mechanism.

    The auditor includes each of ``m`` canaries independently with probability 1/2, runs the
    mechanism once, and guesses the membership of ``r`` canaries (a number fixed in
    advance; it abstains on the others), ``v`` of them right.  For an
    :math:`(\varepsilon, \delta)`-DP mechanism (add/remove of one canary),

    .. math:: P[V \ge v] \le \beta + 2m\delta\,\alpha,\quad
              \beta = P[\mathrm{Bin}(r, q) \ge v],\quad
              \alpha = \max_{1 \le i \le v} \tfrac1i P[v - i \le \mathrm{Bin}(r, q) < v],

    :math:`q = e^\varepsilon/(1 + e^\varepsilon)` (the p-value of the main result of Steinke,
    Nasr & Jagielski 2023, with :math:`\alpha` as there).  A :math:`\mu`-GDP mechanism is
    :math:`(\varepsilon, \delta_\mu(\varepsilon))`-DP for every :math:`\varepsilon`, so
    its tail is bounded by the smallest of these over :math:`\varepsilon` (here over a
    grid: a larger, still valid bound).  Every :math:`\mu` (resp. :math:`\varepsilon`)
    whose bound is at most :math:`1 - c` is rejected: for :math:`\mu` the bound grows
    with :math:`\mu` and the end of the rejected range is found by bisection; for
    :math:`\varepsilon` the bound at each point of a grid of step 0.025 is minimised over
    the larger grid points (an :math:`(\varepsilon, \delta)` guarantee implies the
    weaker ones), and the result is rounded down to a grid point.

    Reading GDP through :math:`(\varepsilon, \delta_\mu(\varepsilon))` is loose (the
    factor :math:`2m` multiplies :math:`\delta`); the f-DP analysis of Mahloujifar,
    Melis & Chaudhuri (2024) is tighter and not implemented here.

    Example:
        >>> r = audit_one_run(m=1000, r=200, v=180, confidence=0.95, delta=1e-5)
        >>> round(r.mu_lower, 3), round(r.eps_lower, 3)  # 90% right; loose in GDP (below)
        (0.546, 1.775)
    """
    c = _confidence(confidence)
    mm, rr, vv = (_counts(n, x)[0] if np.ndim(x) == 0 else None
                  for n, x in (("m", m), ("r", r), ("v", v)))
    if mm is None or rr is None or vv is None:
        raise DomainError(f"m, r, v must be single counts, got {m!r}, {r!r}, {v!r}")
    if not 0 <= vv <= rr <= mm or mm == 0:
        raise DomainError(f"need 0 <= v <= r <= m and m > 0, got m={m!r}, r={r!r}, v={v!r}")
    d = _delta(delta)
    from symgdp.gaussian.vectorised import delta_mu

    t = 1.0 - c
    eps = np.linspace(0.0, 30.0, 1201)  # the eps at which the GDP null is read
    beta, alpha = _one_run_terms(int(rr), int(vv), eps)

    def pvalue(dl: np.ndarray) -> np.ndarray:
        # beta + 2 m delta alpha, rounded up (scipy's binomials: ~1e-14 relative)
        p = (beta + 2.0 * mm * dl * alpha) * (1.0 + 1e-9) + 1e-300
        return np.minimum(p, 1.0)

    def first_rejected_end(grid: np.ndarray, pv: np.ndarray) -> float:
        # suffix minimum: the bound for parameter x may use any larger parameter
        sm = np.minimum.accumulate(pv[::-1])[::-1]
        ok = sm <= t
        if not ok[0]:
            return 0.0
        j = int(np.argmin(ok)) if not np.all(ok) else grid.size - 1
        return float(grid[j - 1] if not np.all(ok) else grid[j])

    # the mu-GDP null: the smallest bound over the eps grid; it grows with mu (delta_mu
    # does, at every eps), so the rejected mu form an interval, found by bisection
    def pv_mu(mu: float) -> float:
        return float(np.min(pvalue(np.asarray(delta_mu(eps, mu)))))

    lo, hi = 0.0, 40.0
    if pv_mu(lo) > t:
        mu_lower = 0.0
    elif pv_mu(hi) <= t:
        mu_lower = hi
    else:
        for _ in range(50):
            mid = (lo + hi) / 2
            if pv_mu(mid) <= t:
                lo = mid
            else:
                hi = mid
        mu_lower = lo
    eps_lower = None
    if d is not None:
        grid = eps
        pv_e = pvalue(np.full(grid.shape, d))
        eps_lower = first_rejected_end(grid, pv_e)
    return OneRunResult(mu_lower, eps_lower, c, d)
