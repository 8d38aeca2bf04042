r"""The searches of :func:`symgdp.measurement.measure.measure` over :math:`[0, \varepsilon_h]`.

Each returns leaves covering the head with an upper bound of :math:`G` on each and the
best point value (a lower bound on the supremum):

* ``_first_order_search``: branch-and-bound in which every leaf is proved non-increasing
  in ball arithmetic and closed by the better of the zeroth-order bound and the
  first-order test (:mod:`symgdp.measurement.firstorder`); before the first round,
  stretches the zeroth-order bound cannot close are swept by the first-order test with
  an adaptive width (``_close_blocks``, ``_sweep``);
* ``_branch_and_bound``: the zeroth-order search alone, in vectorised batches;
* ``_staircase``: the published algorithm (theory §6).

The profile values that steer a search are counted (``_Counted``); a certified
first-order search steers by the midpoints of the point balls (``_BallSteered``).
"""

from __future__ import annotations

import math
import time
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from symgdp.errors import ConvergenceError, PrecisionError, ProfileError, SymgdpWarning
from symgdp.gaussian.vectorised import log_delta_mu, mu_gdp
from symgdp.measurement.result import check_time_limit

# Above this log delta a float64 profile value is recomputed in high precision.
_NEAR_ONE_PROFILE = -1e-6
# Reserve kept between the search's raw gap and tol for the outward nudges.
_MARGIN_FLOAT = 1e-11
_MARGIN_CERT = 1e-13
_SQRT_8PI = math.sqrt(8.0 * math.pi)

# a first-order search still open after this many seconds warns that it may be long
_WARN_AFTER_SECONDS = 15.0

# evaluations per second of the zeroth-order searches, measured on the development
# machine (a few million float64 profile values per second): for the cost warning
_EVALS_PER_SECOND = 3e6


class _Counted:
    """``log_delta`` of a profile that counts evaluations and rejects NaN."""

    def __init__(self, profile: Any) -> None:
        self.profile = profile
        self.count = 0

    def __call__(self, x: np.ndarray) -> np.ndarray:
        check_time_limit()
        self.count += int(np.size(x))
        y = np.asarray(self.profile.log_delta(x), dtype=np.float64).reshape(np.shape(x))
        if np.any(np.isnan(y)):
            raise ProfileError(f"the profile is NaN at eps={x[np.isnan(y)].flat[0]!r}")
        near = y > _NEAR_ONE_PROFILE
        if np.any(near) and hasattr(self.profile, "_mp_log"):
            # delta within 1e-6 of 1: float64 keeps few digits of 1 - delta (and rounds
            # 1 - 1e-17 to 1, i.e. mu = inf); resolve these in high precision
            flat = y.reshape(-1)
            for i in np.flatnonzero(near.reshape(-1)).tolist():
                flat[i] = self.profile._mp_log(float(np.asarray(x).reshape(-1)[i]))
        return y


class _BallSteered(_Counted):
    """``log_delta`` steering a certified first-order search: the midpoints of the
    first-order machinery's point balls (cached there, and reused by the proofs), with
    the float evaluator (built only if needed) where a ball is undecided or not accurate
    to float64.  Every bound of a certified bracket is proved in ball arithmetic
    afterwards, so these values only choose where the search looks; they spare a
    profile the preparation of its float evaluator (a sweep point's largest cost)."""

    def __init__(self, profile: Any, fo: Any) -> None:
        super().__init__(profile)
        self.fo = fo

    def __call__(self, x: np.ndarray) -> np.ndarray:
        check_time_limit()
        flat = np.asarray(x, dtype=np.float64).reshape(-1)
        out = np.empty(flat.size)
        todo = []
        for i, xi in enumerate(flat.tolist()):
            v = self.fo.log_delta(xi)
            if v.is_finite():
                m, r = float(v.mid()), float(v.rad())
                if r <= 4e-16 * abs(m) + 1e-300:
                    out[i] = min(m, 0.0)
                    continue
            elif bool(v.is_exact() and not v.is_finite() and v < 0):
                out[i] = -math.inf  # an exact zero of the profile
                continue
            todo.append(i)
        self.count += flat.size - len(todo)
        if todo:
            out[todo] = super().__call__(flat[todo])
        return out.reshape(np.shape(x))


@dataclass
class _Search:
    lower: float
    argmax: float
    upper: float
    leaf_a: np.ndarray  # leaves cover [0, eps_h]: upper bound mu_gdp(b, log_delta=la)
    leaf_b: np.ndarray
    leaf_la: np.ndarray
    leaf_u: np.ndarray
    notes: list[str]
    # per leaf, a proved bound tau with delta <= delta(a) e^tau on [a, b] (None: all 0)
    leaf_rise: np.ndarray | None = None


def _margin(certify: bool, upper: float) -> float:
    if not math.isfinite(upper):
        return 0.0
    return (_MARGIN_CERT if certify else _MARGIN_FLOAT) * (1.0 + upper)


# ---------------------------------------------------------------------------------------
# branch-and-bound


def _branch_and_bound(ld: _Counted, eps_h: float, tol: float, certify: bool,
                      max_evaluations: int, initial: int) -> _Search:
    x = np.linspace(0.0, eps_h, initial + 1)
    lx = ld(x)
    g = mu_gdp(x, log_delta=lx, rounding="nearest")
    i = int(np.argmax(g))
    best, arg = float(g[i]), float(x[i])
    a, b, la = x[:-1], x[1:], lx[:-1]
    u = mu_gdp(b, log_delta=la, rounding="nearest")
    pool: list[tuple[np.ndarray, ...]] = []
    history: list[int] = []
    warned = False
    while True:
        if math.isinf(best):  # delta = 1 somewhere: no finite mu
            break
        up = max(best, float(u.max())) if u.size else best
        target = tol - 2.0 * _margin(certify, up)
        if target <= 0.5 * tol:
            raise PrecisionError(
                f"tol={tol!r} is too fine for mu ~ {up:.6g} in "
                f"{'ball' if certify else 'float64'} arithmetic"
                + ("" if certify else "; pass certify=True"))
        if up - best <= target:
            break
        pruned = u <= best
        if np.any(pruned):
            pool.append((a[pruned], b[pruned], la[pruned], u[pruned]))
        split = u > best + target
        keep = ~pruned & ~split
        m = 0.5 * (a[split] + b[split])
        if np.any((m <= a[split]) | (m >= b[split])):
            raise PrecisionError(
                f"the bracket [{best!r}, {up!r}] cannot be narrowed to tol={tol!r}: an "
                f"interval at eps~{float(a[split][0])!r} is down to one float64 ulp "
                "(a jump of the profile there?)")
        history.append(int(np.count_nonzero(split)))
        if len(history) >= 5 and all(h1 >= 1.8 * h0 for h0, h1 in
                                     zip(history[-4:-1], history[-3:], strict=True)):
            # nothing is being pruned: a flat GDPT (e.g. the Gaussian mechanism's own
            # profile).  There an interval still needs about (U - best)/target children,
            # so the total is predictable: give up now rather than after the budget.
            need = float(np.sum(np.minimum((u[split] - best) / target, 1e15)))
            if need / _EVALS_PER_SECOND > 60 and ld.count + need <= max_evaluations \
                    and not warned:
                warned = True
                warnings.warn(
                    f"the branch-and-bound measurement of a flat GDPT needs about {need:.3g} "
                    f"more profile evaluations (about {need / _EVALS_PER_SECOND:.0f} s); "
                    "method='auto' is usually far faster", SymgdpWarning, stacklevel=4)
            if ld.count + need > max_evaluations:
                raise ConvergenceError(
                    f"branch-and-bound stopped at the bracket [{best:.10g}, {up:.10g}] after "
                    f"{ld.count} profile evaluations: the GDPT is flat and about {need:.2g} "
                    f"more are needed (max_evaluations={max_evaluations}; a flat GDPT "
                    "needs up to 1.25*eps_h/tol): raise tol or lower eps_h")
        if ld.count + m.size > max_evaluations:
            raise ConvergenceError(
                f"branch-and-bound stopped at the bracket [{best:.10g}, {up:.10g}] after "
                f"{ld.count} profile evaluations (max_evaluations={max_evaluations}); a flat "
                "GDPT needs about 1.25*eps_h/tol of them: raise tol or lower eps_h")
        lm = ld(m)
        asp, bsp, lasp = a[split], b[split], la[split]
        # one vectorised inversion for the new point values and both children's bounds
        k = m.size
        mus = mu_gdp(np.concatenate([m, m, bsp]), log_delta=np.concatenate([lm, lasp, lm]),
                     rounding="nearest")
        gm = mus[:k]
        if k:
            j = int(np.argmax(gm))
            if gm[j] > best:
                best, arg = float(gm[j]), float(m[j])
        a = np.concatenate([a[keep], asp, m])
        b = np.concatenate([b[keep], m, bsp])
        la = np.concatenate([la[keep], lasp, lm])
        u = np.concatenate([u[keep], mus[k:]])
    pool.append((a, b, la, u))
    cols = [np.concatenate(c) for c in zip(*pool, strict=True)]
    up = max(best, float(cols[3].max())) if cols[3].size else best
    return _Search(best, arg, up, cols[0], cols[1], cols[2], cols[3], notes=[])


# ---------------------------------------------------------------------------------------
# the first-order search


@dataclass
class _FirstOrderLeaves:
    """Leaves closed by the first-order test: sup G <= bound on [a, b], proved in balls."""

    a: list[float] = field(default_factory=list)
    b: list[float] = field(default_factory=list)
    bound: float = 0.0


def _first_order_search(ld: _Counted, fo: Any, eps_h: float, tol: float, certify: bool,
                        max_evaluations: int, initial: int,
                        progress: Any) -> tuple[_Search, _FirstOrderLeaves]:
    """Branch-and-bound in which every leaf is proved non-increasing in ball arithmetic
    and closed by the better of the zeroth-order bound and the first-order test."""
    if hasattr(fo, "use_series") and not callable(getattr(ld.profile, "first_order", None)):
        # the high-order Taylor test, built on first need (not for a profile with its own
        # exact first-order pieces, e.g. the k-fold composition)
        fo.use_series(ld.profile)
    grid = np.linspace(0.0, eps_h, initial + 1)
    cuts = [c for c in getattr(fo, "branch_points", ()) if 0.0 < c < eps_h]
    x = np.union1d(grid, np.asarray(cuts, dtype=np.float64))
    lx = ld(x)
    g = mu_gdp(x, log_delta=lx, rounding="nearest")
    i = int(np.argmax(g))
    best, arg = float(g[i]), float(x[i])
    pa, pb, pla = x[:-1].tolist(), x[1:].tolist(), lx[:-1].tolist()
    zero: list[tuple[float, float, float, Any]] = []
    first = _FirstOrderLeaves()
    target = tol - 2.0 * _margin(certify, best + tol)
    # intervals the sweep failed to prove, with the mu+ tried: not tried again below it
    failed: dict[tuple[float, float], float] = {}
    if not cuts and target > 0.5 * tol and math.isfinite(best):
        pa, pb, pla = _close_blocks(fo, ld, pa, pb, pla, best + 0.9 * target, first,
                                    failed)
    rounds = 0
    started, warned = time.perf_counter(), False
    while pa and not math.isinf(best):
        rounds += 1
        if not warned and time.perf_counter() - started > _WARN_AFTER_SECONDS:
            warned = True
            warnings.warn(
                f"the first-order search has run {_WARN_AFTER_SECONDS:g} s with "
                f"{len(pa)} intervals still open near mu ~ {best:.6g}: it may take minutes "
                f"(eps_h={eps_h!r}, tol={tol!r}); raise tol or lower eps_h",
                SymgdpWarning, stacklevel=4)
        target = tol - 2.0 * _margin(certify, best + tol)
        if target <= 0.5 * tol:
            raise PrecisionError(
                f"tol={tol!r} is too fine for mu ~ {best:.6g} in "
                f"{'ball' if certify else 'float64'} arithmetic"
                + ("" if certify else "; pass certify=True"))
        mu_plus = best + 0.9 * target
        u = mu_gdp(np.asarray(pb), log_delta=np.asarray(pla), rounding="nearest")
        sa, sb, sla = [], [], []
        for k, (a, b, la) in enumerate(zip(pa, pb, pla, strict=True)):
            uk = float(u[k])
            closed = False
            if uk <= mu_plus:
                r = fo.rise(a, b)
                if r is not None:
                    # sup delta on [a, b] <= delta(a) e^tau + add: the zeroth-order bound
                    # uses that inflated value
                    zero.append((a, b, _inflated(la, *r), r))
                    closed = True
            elif failed.get((a, b), -math.inf) < mu_plus and fo.prove_below(a, b, mu_plus):
                if fo.rise(a, b) is not None:
                    first.a.append(a)
                    first.b.append(b)
                    first.bound = max(first.bound, mu_plus)
                    closed = True
            if not closed:
                sa.append(a)
                sb.append(b)
                sla.append(la)
        if not sa:
            break
        a_, b_ = np.asarray(sa), np.asarray(sb)
        m = 0.5 * (a_ + b_)
        stuck = (m <= a_) | (m >= b_)
        if np.any(stuck):
            j = int(np.flatnonzero(stuck)[0])
            _stuck_error(fo, float(a_[j]), float(b_[j]), best, tol)
        if ld.count + m.size > max_evaluations:
            raise ConvergenceError(
                f"the first-order search stopped at the bracket [{best:.10g}, "
                f"{max(best, first.bound, float(u.max())):.10g}] after {ld.count} profile "
                f"evaluations (max_evaluations={max_evaluations}): raise tol or lower eps_h")
        lm = ld(m)
        gm = mu_gdp(m, log_delta=lm, rounding="nearest")
        j = int(np.argmax(gm))
        if gm[j] > best:
            best, arg = float(gm[j]), float(m[j])
        # a point value above its left neighbour's is a rise, unless within float noise:
        # confirm in ball arithmetic and refuse
        prev = np.asarray(sla)
        with np.errstate(invalid="ignore"):
            rose = np.isfinite(lm) & (lm > prev + 1e-9 * (1 + np.abs(lm)))
        for jj in np.flatnonzero(rose).tolist():
            _refuse_rise(fo, float(a_[jj]), float(m[jj]))
        pa = sa + m.tolist()
        pb = m.tolist() + sb
        pla = sla + lm.tolist()
        if progress is not None and rounds % 4 == 0:
            progress(ld.count, max(first.bound, float(u.max())) - best)
    za = np.asarray([z[0] for z in zero])
    zb = np.asarray([z[1] for z in zero])
    zla = np.asarray([z[2] for z in zero])
    zrise = np.asarray([z[3] for z in zero], dtype=np.float64).reshape(-1, 2)
    zu = mu_gdp(zb, log_delta=zla, rounding="nearest") if za.size else np.empty(0)
    up = max(best, first.bound, float(zu.max()) if zu.size else 0.0)
    s = _Search(best, arg, up, za, zb, zla, zu,
                notes=[f"first-order search: {len(first.a)} intervals closed by the "
                       f"first-order test, {za.size} by the zeroth-order bound; every one "
                       "proved non-increasing in ball arithmetic"], leaf_rise=zrise)
    return s, first


#: the sweep of _close_blocks: consecutive failures after which it hands the rest of a
#: cell to the bisection (also once its width is below the cell's over 2 to this power)
_SWEEP_FAILS = 6
#: the sweep's width after a proof: times the growth of the distance from 0 (at most
#: _SWEEP_GROW), times _SWEEP_GROW again before the first failure and _SWEEP_DRIFT after
#: it, and at most 0.9 times the smallest ratio of width to distance not proved, which
#: grows by _SWEEP_FORGET at each proof
_SWEEP_GROW, _SWEEP_DRIFT, _SWEEP_FORGET = 1.5, 1.08, 1.02


def _close_blocks(fo: Any, ld: _Counted, pa: list[float], pb: list[float],
                  pla: list[float], mu_plus: float, first: _FirstOrderLeaves,
                  failed: dict[tuple[float, float], float] | None = None
                  ) -> tuple[list[float], list[float], list[float]]:
    """Before the first round: every stretch of consecutive initial cells that the
    zeroth-order bound cannot close is swept from left to right by the first-order test
    with an adaptive width, as an ODE solver adapts its step (see _sweep); each interval
    proved is one leaf, each one not proved is noted in ``failed`` (with ``mu_plus``).
    The returned cells and the leaves added to ``first`` cover the given cells exactly."""
    failed = {} if failed is None else failed
    u = mu_gdp(np.asarray(pb), log_delta=np.asarray(pla), rounding="nearest")
    open_ = (u > mu_plus).tolist()
    sa: list[float] = []
    sb: list[float] = []
    sla: list[float] = []
    n, i = len(pa), 0
    while i < n:
        if not open_[i]:
            sa.append(pa[i])
            sb.append(pb[i])
            sla.append(pla[i])
            i += 1
            continue
        j = i
        while j < n and open_[j]:
            j += 1
        _sweep(fo, ld, pa[i:j], pb[i:j], pla[i:j], mu_plus, first, sa, sb, sla, failed)
        i = j
    return sa, sb, sla


def _sweep(fo: Any, ld: _Counted, pa: list[float], pb: list[float], pla: list[float],
           mu_plus: float, first: _FirstOrderLeaves, sa: list[float], sb: list[float],
           sla: list[float], failed: dict[tuple[float, float], float]) -> None:
    """The sweep of _close_blocks over the consecutive cells ``pa``/``pb``, from the
    left, with the first cell's width (a quarter of it from 0, where the provable width
    does not scale with the distance).  After a proof the width grows with the distance
    from 0 (on a flat, nearly Gaussian GDPT the tests prove intervals of about a fixed
    fraction of it; by at most
    ``_SWEEP_GROW``) and by ``_SWEEP_GROW`` more until the first failure, by
    ``_SWEEP_DRIFT`` after it, never above 0.9 times the smallest ratio of width to
    distance not proved (slowly forgotten); after a failure it is halved (the tests
    have the old midpoint's values at hand).  After ``_SWEEP_FAILS`` failures in a row,
    or once the width is far below the cell's, the rest of the cell goes on to the
    bisection (split at the sweep's position, whose value is evaluated) and the sweep
    resumes at the next cell, with no memory of the failures.  Only the cost depends on
    these choices: every leaf is proved."""
    end = pb[-1]
    k = 0  # the cell holding the sweep's position x
    x, w = pa[0], (pb[0] - pa[0]) * (0.25 if pa[0] == 0 else 1.0)
    fails = 0
    bad = math.inf  # the smallest ratio of width to distance from 0 not proved
    while k < len(pa):
        y = x + w
        if y >= end or end - y < 0.25 * w:
            y = end
        if fo.prove_below(x, y, mu_plus) and fo.rise(x, y, depth=1) is not None:
            first.a.append(x)
            first.b.append(y)
            first.bound = max(first.bound, mu_plus)
            fails = 0
            bad *= _SWEEP_FORGET
            # as fast as _SWEEP_GROW until the first failure, then slowly
            drift = _SWEEP_GROW if math.isinf(bad) else _SWEEP_DRIFT
            w = (y - x) * (min(y / x, _SWEEP_GROW) if x > 0 else _SWEEP_GROW) * drift
            w = min(w, 0.9 * bad * y)
            x = y
            while k < len(pa) and pb[k] <= x:
                k += 1
            continue
        fails += 1
        failed[(x, y)] = mu_plus
        if x > 0:
            bad = min(bad, (y - x) / x)
        w = 0.5 * (y - x)  # the new end is the old midpoint, whose values are cached
        if (fails < _SWEEP_FAILS and x < x + w < y
                and w * 2.0 ** _SWEEP_FAILS >= pb[k] - pa[k]):
            continue
        # give up on the rest of this cell: the bisection takes it
        la = pla[k] if x == pa[k] else float(ld(np.array([x]))[0])
        sa.append(x)
        sb.append(pb[k])
        sla.append(la)
        k += 1
        if k < len(pa):
            x, fails = pa[k], 0
            w = min(pb[k] - pa[k], 0.9 * bad * x)
            bad = math.inf  # a stretch given up is no guide to the next one


def _inflated(la: float, tau: float, add: float) -> float:
    """An upper bound on log(e^(la + tau) + add), rounded up."""
    if not tau and not add:
        return la
    v = la + tau
    if add:
        v = float(np.logaddexp(v, math.log(add)))
    return min(math.nextafter(math.nextafter(v, math.inf), math.inf), 0.0)


def _refuse_rise(fo: Any, a: float, m: float) -> None:
    da, dm = fo.delta(a), fo.delta(m)
    if bool(dm > da) and bool(da < 1):
        raise ProfileError(
            f"the profile increases between eps={a!r} and eps={m!r} "
            f"(delta = {da.str(6, radius=False)} -> {dm.str(6, radius=False)}): not a "
            "privacy profile")


def _stuck_error(fo: Any, a: float, b: float, best: float, tol: float) -> None:
    if fo.rising_at(a) or fo.rising_at(b):
        raise ProfileError(f"the profile increases near eps={a!r}: not a privacy profile")
    if not fo.nonincreasing(a, b):
        raise ProfileError(
            f"cannot prove the profile non-increasing on [{a!r}, {b!r}] even at float64 "
            "resolution (a rise, a jump or a cancellation there?)")
    raise PrecisionError(
        f"the bracket near {best!r} cannot be narrowed to tol={tol!r}: an interval at "
        f"eps~{a!r} is down to one float64 ulp (a jump of the profile there?)")


# ---------------------------------------------------------------------------------------
# the published staircase (theory §6)


def _staircase(ld: _Counted, eps_h: float, tol: float, seed: int,
               max_evaluations: int, chunk: int = 1 << 18) -> _Search:
    n = max(1, math.ceil(_SQRT_8PI * eps_h / tol))
    if n + 2 > max_evaluations:
        raise ConvergenceError(
            f"the staircase needs n+2 = {n + 2} profile evaluations for eps_h={eps_h!r}, "
            f"tol={tol!r} (max_evaluations={max_evaluations})")
    step = eps_h / n
    rng = np.random.default_rng(seed)
    up, lo, arg = 0.0, 0.0, 0.0
    root_finds = 0
    # steps i = 0..n cover [x_i, x_{i+1}] with x_i = i*D; visited block by block in random
    # block order and in random order inside a block, as the algorithm shuffles its steps
    starts = np.arange(0, n + 1, chunk)
    rng.shuffle(starts)
    for s in starts:
        e = min(s + chunk, n + 1)
        pts = np.arange(s, e + 1, dtype=np.float64) * step
        lp = ld(pts)
        xl, xr, l_left, l_right = pts[:-1], pts[1:], lp[:-1], lp[1:]
        order = rng.permutation(e - s)
        # upper steps mu_gdp(x_{i+1}, delta(x_i)): a step beats the running bound U iff
        # delta(x_i) > delta_U(x_{i+1}), a forward evaluation; root-find only the records
        cand = order[l_left[order] > log_delta_mu(xr[order], up, rounding="nearest")]
        while cand.size:
            j = cand[0]
            v = float(mu_gdp(xr[j], log_delta=l_left[j], rounding="nearest"))
            root_finds += 1
            up = max(up, v)
            if math.isinf(up):
                break
            rest = cand[1:]
            cand = rest[l_left[rest] > log_delta_mu(xr[rest], up, rounding="nearest")]
        # lower steps mu_gdp(x_i, delta(x_{i+1}))
        cand = order[l_right[order] > log_delta_mu(xl[order], lo, rounding="nearest")]
        while cand.size:
            j = cand[0]
            v = float(mu_gdp(xl[j], log_delta=l_right[j], rounding="nearest"))
            root_finds += 1
            if v > lo:
                lo, arg = v, float(xl[j])
            if math.isinf(lo):
                break
            rest = cand[1:]
            cand = rest[l_right[rest] > log_delta_mu(xl[rest], lo, rounding="nearest")]
    empty = np.empty(0)
    return _Search(lo, arg, up, empty, empty, empty, empty,
                   notes=[f"staircase: n={n} steps of width {step:.3g}, "
                          f"{root_finds} root-finds"])


def _cover_below(ld: _Counted, eps_h: float, cap: float, max_evaluations: int,
                 initial: int = 64) -> tuple[np.ndarray, ...]:
    """Leaves covering [0, eps_h] whose float upper bounds are all <= cap (for certifying a
    bracket found by another method)."""
    x = np.linspace(0.0, eps_h, initial + 1)
    lx = ld(x)
    a, b, la = x[:-1], x[1:], lx[:-1]
    u = mu_gdp(b, log_delta=la, rounding="nearest")
    done: list[tuple[np.ndarray, ...]] = []
    while True:
        ok = u <= cap
        done.append((a[ok], b[ok], la[ok], u[ok]))
        if np.all(ok):
            break
        a, b, la = a[~ok], b[~ok], la[~ok]
        m = 0.5 * (a + b)
        if np.any((m <= a) | (m >= b)) or ld.count + m.size > max_evaluations:
            raise PrecisionError(
                f"could not cover [0, {eps_h!r}] by intervals whose bound stays below "
                f"{cap!r} (stuck near eps={float(a[0])!r})")
        lm = ld(m)
        a, b, la = np.concatenate([a, m]), np.concatenate([m, b]), np.concatenate([la, lm])
        u = mu_gdp(b, log_delta=la, rounding="nearest")
    return tuple(np.concatenate(c) for c in zip(*done, strict=True))
