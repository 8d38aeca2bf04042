r"""Composition of :math:`k` pure :math:`\varepsilon_0`-DP mechanisms, side by side
(theory §8).

Notation: :math:`p = e^{\varepsilon_0}/(1 + e^{\varepsilon_0})`, :math:`q = 1 - p`, and
:math:`L_i = (k - 2i)\varepsilon_0` the privacy-loss levels of :math:`k`-fold randomized
response, taken with probability :math:`w_i = \binom{k}{i} p^{k-i} q^{i}`.

* Basic composition: :math:`(k\varepsilon_0, 0)`-DP; through the partial order of
  theory §2 this gives :math:`\varepsilon = \log(e^{k\varepsilon_0} -
  \delta(1 + e^{k\varepsilon_0}))` at level :math:`\delta`.
* Advanced composition (Dwork, Rothblum & Vadhan 2010; Dwork & Roth 2014, Thm 3.20):
  :math:`\varepsilon = \varepsilon_0\sqrt{2k\log(1/\delta)} + k\varepsilon_0(e^{\varepsilon_0}-1)`.
* Optimal composition (Kairouz, Oh & Viswanath 2015, Thm 3.3; exact for :math:`k`-fold
  randomized response):

  .. math:: \delta(\varepsilon) = \sum_{j=0}^{k}\binom{k}{j}
            \bigl(p^{j}q^{k-j} - e^{\varepsilon}q^{j}p^{k-j}\bigr)_+
            = \sum_{i:\,L_i > \varepsilon} w_i\,\bigl(1 - e^{\varepsilon - L_i}\bigr).

  The second form has only positive terms, so it is summed in log space without
  cancellation (:func:`optimal_log_delta`), and it is affine in :math:`e^{\varepsilon}`
  between consecutive levels, which inverts it exactly (:func:`optimal_eps`).
* GDP composition (Dong, Roth & Su 2021, Cor. 3.3): :math:`\mu = \sqrt{k}\,\mu_0`, and
  :math:`\varepsilon` at level :math:`\delta` solves :math:`\delta_\mu(\varepsilon) = \delta`.

The profile of :func:`optimal_pure_dp` is handled piece by piece: between consecutive
levels it is :math:`\delta(L_u) - C_u\,\mathrm{expm1}(\varepsilon - L_u)`, two
non-negative terms whose constants are computed once in ball arithmetic, so float, high
precision and certified evaluation all avoid the binomial sum, at any :math:`k`.

The GDP measurements (``gdp_laplace``, ``gdp_summary``) bound
:math:`\sup_\varepsilon \mu_{GDP}(\varepsilon, \delta(\varepsilon))` with
:func:`symgdp.measurement.measure.measure` (first-order search, every bound proved in ball
arithmetic) on the same exact pieces (the Laplace profile is one such piece).  Both
profiles are 0 from :math:`k\varepsilon_0` (resp. :math:`\varepsilon_0`) on, so the head
bound covers the whole range.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import mpmath
import numpy as np
import sympy
from flint import arb

from symgdp.errors import DomainError
from symgdp.gaussian.vectorised import eps_gdp, mu_from_pure_dp
from symgdp.mechanisms import EPS0
from symgdp.pld.kov import (
    KovPieces,
    check_eps0,
    check_k,
    delta_array,
    kov_first_order,
    kov_pieces,
    laplace_mu,
    optimal_eps,
    optimal_log_delta,
    optimal_mu,
    out_array,
)
from symgdp.profile import Profile
from symgdp.symbolic.symbols import eps as _EPS
from symgdp.symbolic.symbols import sympify_value

__all__ = [
    "basic",
    "advanced",
    "gdp",
    "optimal_pure_dp",
    "optimal_log_delta",
    "optimal_eps",
    "optimal_mu",
    "laplace_mu",
    "rdp",
    "rdp_tight",
    "clt_mu",
    "table",
    "CompositionTable",
    "ROWS",
    "ROW_LABELS",
    "APPROXIMATE_ROWS",
    "K",
]

#: the number of composed mechanisms
K = sympy.Symbol("k", positive=True, integer=True)
_I = sympy.Symbol("i", integer=True, nonnegative=True)

#: row names of :func:`table`, in display order
ROWS = ("basic", "advanced", "rdp", "rdp_tight", "gdp", "gdp_laplace", "clt", "pld",
        "pld_laplace", "gdp_summary_laplace", "optimal", "gdp_summary")
#: rows that are approximations, never guarantees
APPROXIMATE_ROWS = ("clt",)



def _is_symbolic(*args: Any) -> bool:
    return any(isinstance(a, sympy.Basic) and not a.is_number for a in args)


# -- closed-form baselines ----------------------------------------------------------------
def basic(eps0: Any, k: Any, delta: Any) -> Any:
    r"""Basic composition at level :math:`\delta` sharpened by the partial order:
    :math:`\varepsilon = \bigl(\log(e^{k\varepsilon_0} - \delta(1 + e^{k\varepsilon_0}))\bigr)_+`
    (theory §2, §8).

    Numbers in give a float (an array for an array ``delta``); any SymPy symbol among the
    arguments gives the SymPy expression.

    Example:
        >>> round(basic(0.2, 50, 0.1), 10)
        9.8946344399
    """
    if _is_symbolic(eps0, k, delta):
        kk = sympy.sympify(k) * sympy.sympify(eps0)
        d = sympy.sympify(delta)
        return sympy.Max(0, sympy.log(sympy.exp(kk) - d * (1 + sympy.exp(kk))))
    total = check_eps0(eps0) * check_k(k)
    scalar, d = delta_array(delta)
    with np.errstate(divide="ignore", invalid="ignore"):
        # log(e^K - d(1 + e^K)) = K + log1p(-d(1 + e^-K)), no overflow for large K
        val = total + np.log1p(-d * (1.0 + math.exp(-total)))
    return out_array(scalar, np.where(np.isnan(val), 0.0, np.maximum(val, 0.0)))


def advanced(eps0: Any, k: Any, delta: Any) -> Any:
    r"""Advanced composition (Dwork, Rothblum & Vadhan 2010):

    .. math:: \varepsilon = \varepsilon_0\sqrt{2k\log(1/\delta)}
              + k\varepsilon_0(e^{\varepsilon_0} - 1)

    Example:
        >>> round(advanced(0.2, 50, 0.1), 10)
        5.2488818404
    """
    if _is_symbolic(eps0, k, delta):
        e0, kk, d = (sympy.sympify(a) for a in (eps0, k, delta))
        return e0 * sympy.sqrt(2 * kk * sympy.log(1 / d)) + kk * e0 * (sympy.exp(e0) - 1)
    e0, kk = check_eps0(eps0), check_k(k)
    scalar, d = delta_array(delta)
    val = e0 * np.sqrt(2.0 * kk * -np.log(d)) + kk * e0 * math.expm1(e0)
    return out_array(scalar, val)


def gdp(mu: Any, k: Any) -> Any:
    r""":math:`k`-fold composition of :math:`\mu`-GDP: :math:`\sqrt{k}\,\mu`
    (Dong, Roth & Su 2021, Cor. 3.3).

    Example:
        >>> gdp(0.5, 4)
        1.0
    """
    if _is_symbolic(mu, k):
        return sympy.sqrt(sympy.sympify(k)) * sympy.sympify(mu)
    m = float(mu)
    if not m >= 0:
        raise DomainError(f"mu must be >= 0, got {mu!r}")
    return math.sqrt(check_k(k)) * m


def rdp(eps0: Any, k: Any, delta: Any) -> Any:
    r"""The RDP bound of Table 1 of the GDPT paper (Liu, Sun, Jiang & Kong, NeurIPS 2022),
    Mironov's Corollary 1 (CSF 2017) for :math:`k`-fold :math:`\varepsilon_0`-DP:
    :math:`\varepsilon = 4\varepsilon_0\sqrt{2k\log(1/\delta)}`.

    The formula drops the :math:`k\varepsilon_0^2` term of the Rényi bound it comes from,
    so it is a guarantee only under the corollary's condition on :math:`\varepsilon_0`,
    :math:`k` and :math:`\delta`; outside it the value can be *below* the exact optimum
    (1000-fold 1-DP at :math:`\delta = 10^{-3}`: 470.2 against the exact 546.3).
    :func:`table` lists the row as not a guarantee unless every entry is at least the
    proven :func:`rdp_tight` bound (true for the paper's parameters).

    Example:
        >>> [round(rdp(0.2, 50, d), 2) for d in (1e-1, 1e-2, 1e-3, 1e-4)]
        [12.14, 17.17, 21.03, 24.28]
    """
    if _is_symbolic(eps0, k, delta):
        e0, kk, d = (sympy.sympify(a) for a in (eps0, k, delta))
        return 4 * e0 * sympy.sqrt(2 * kk * sympy.log(1 / d))
    e0, kk = check_eps0(eps0), check_k(k)
    scalar, d = delta_array(delta)
    return out_array(scalar, 4.0 * e0 * np.sqrt(2.0 * kk * -np.log(d)))


# the order grid of rdp_tight in t = log(alpha - 1), and the golden ratio of its search
_RDP_T = np.linspace(-8.0, 12.0, 201)
_GOLD = (math.sqrt(5.0) - 1.0) / 2.0
_RDP_NEAR = (-1e-9, -3e-10, -1e-10, 1e-10, 3e-10, 1e-9)


def _rdp_objective(e0: float, kk: int, log_d: np.ndarray, t: np.ndarray) -> np.ndarray:
    """The (float, unrounded) objective of :func:`rdp_tight` at orders alpha = 1 + e^t, one
    per log delta; only its minimiser is used, the value is re-evaluated rounded up."""
    from symgdp.notions.renyi import pure_dp_rdp

    a = 1.0 + np.exp(t)
    return (float(kk) * pure_dp_rdp(e0, a) + np.log1p(-1.0 / a)
            - (log_d + np.log(a)) / (a - 1.0))


def _rdp_tight_up(e0: float, kk: int, d: float, t: float) -> float:
    """The bound of :func:`rdp_tight` at the float order alpha = 1 + e^t, rounded up.

    Errors (u = 2^-52): k times the rounded-up curve, u of it; log1p(-1/alpha), u of it
    plus the rounding of 1/alpha amplified by 1/(alpha - 1); -(log delta + log
    alpha)/(alpha - 1), the two logs' roundings u (|log delta| + log alpha) divided by
    alpha - 1 (their sum may cancel, so not relative to the term), plus u of the term for
    the division and alpha - 1; fsum rounds once.  Four times their sum, plus one ulp.
    """
    from symgdp.notions.renyi import UNIT_ROUNDOFF, pure_dp_rdp

    a = 1.0 + math.exp(t)
    ts = (kk * float(pure_dp_rdp(e0, a)), math.log1p(-1.0 / a),
          -(math.log(d) + math.log(a)) / (a - 1.0))
    s = math.fsum(ts)
    err = (abs(ts[0]) + abs(ts[1]) + 2.0 * abs(ts[2]) + abs(s)
           + (1.0 + abs(math.log(d)) + math.log(a)) / (a - 1.0))
    return math.nextafter(s + 4.0 * UNIT_ROUNDOFF * err, math.inf)


def _rdp_tight_all(e0: float, kk: int, d: np.ndarray) -> np.ndarray:
    """:func:`rdp_tight` for every delta at once: the curve on the order grid is shared by
    all of them (only the conversion term depends on delta), and the golden-section
    search around each grid minimum runs on all of them together."""
    from symgdp.notions.renyi import pure_dp_rdp

    log_d = np.log(d)
    ag = 1.0 + np.exp(_RDP_T)
    # the delta-free part of the objective on the grid, then each delta's conversion term
    base = float(kk) * pure_dp_rdp(e0, ag) + np.log1p(-1.0 / ag)
    vals = base[None, :] - (log_d[:, None] + np.log(ag)[None, :]) / (ag - 1.0)[None, :]
    i = np.argmin(vals, axis=1)
    lo = _RDP_T[np.maximum(i - 1, 0)]
    hi = _RDP_T[np.minimum(i + 1, _RDP_T.size - 1)]
    # golden section on [lo, hi] (width <= 0.2) down to 1e-11: the objective is smooth
    # there, so the value at the point found is within ~f'' 1e-22 of the minimum
    x1, x2 = hi - _GOLD * (hi - lo), lo + _GOLD * (hi - lo)
    f1, f2 = _rdp_objective(e0, kk, log_d, x1), _rdp_objective(e0, kk, log_d, x2)
    while np.max(hi - lo) > 1e-11:
        left = f1 < f2  # the minimum lies in [lo, x2], else in [x1, hi]
        hi = np.where(left, x2, hi)
        lo = np.where(left, lo, x1)
        x1, x2 = (np.where(left, hi - _GOLD * (hi - lo), x2),
                  np.where(left, x1, lo + _GOLD * (hi - lo)))
        fe = _rdp_objective(e0, kk, log_d, np.where(left, x1, x2))
        f1, f2 = np.where(left, fe, f2), np.where(left, f1, fe)
    out = np.empty(d.shape)
    for j in range(d.size):
        # every order gives a valid epsilon: the smallest of the rounded-up candidates,
        # the grid's best order and orders within 1e-9 of the minimiser (the objective
        # is flat there to ~1e-16 relative, so these differ only in their roundings),
        # all inside the grid's range
        mid = 0.5 * (lo[j] + hi[j])
        cands = (_RDP_T[i[j]], mid,
                 *np.clip([mid + h for h in _RDP_NEAR], _RDP_T[0], _RDP_T[-1]))
        best = min(_rdp_tight_up(e0, kk, float(d[j]), float(t)) for t in cands)
        out[j] = max(best, 0.0)
    return out


def rdp_tight(eps0: Any, k: Any, delta: Any) -> Any:
    r"""The exact Rényi curve of :math:`\varepsilon_0`-DP
    (:func:`symgdp.notions.renyi.pure_dp_rdp`), composed :math:`k` times and converted by
    the improved conversion (Canonne, Kamath & Steinke 2020; Asoodeh et al. 2021), minimised
    over real orders :math:`\alpha > 1`:

    .. math:: \varepsilon = \min_\alpha k\hat\varepsilon(\alpha) + \log\frac{\alpha-1}{\alpha}
              - \frac{\log\delta + \log\alpha}{\alpha - 1}.

    Any order gives a valid :math:`\varepsilon`; the minimiser found numerically (a grid
    in :math:`\log(\alpha - 1)` shared by all :math:`\delta`, then a golden-section
    search around its best point) may be slightly above the
    true minimum, never below it: the value at the chosen order is rounded up (the curve
    is summed without cancellation and rounded up, and the sum carries a slack of 8 u of
    the absolute size of its terms).

    Example:
        >>> round(rdp_tight(0.2, 50, 1e-3), 3)
        5.224
    """
    e0, kk = check_eps0(eps0), check_k(k)
    scalar, d = delta_array(delta)
    return out_array(scalar, _rdp_tight_all(e0, kk, np.atleast_1d(d)))


def clt_mu(eps0: Any, k: Any) -> float:
    r"""Dong, Roth & Su's central limit theorem (JRSS-B 2021, §3) for :math:`k`-fold
    :math:`\varepsilon_0`-DP: with :math:`\mathrm{kl} = \varepsilon_0
    (e^{\varepsilon_0} - 1)/(e^{\varepsilon_0} + 1)` and :math:`\kappa_2 = \varepsilon_0^2`
    per step, :math:`\mu = 2k\,\mathrm{kl}/\sqrt{k\kappa_2} = 2\sqrt{k}\tanh(\varepsilon_0/2)`.
    **An approximation** (exact only in the limit), not a bound.

    Example:
        >>> round(clt_mu(0.2, 50), 6)
        1.409518
    """
    e0, kk = check_eps0(eps0), check_k(k)
    return 2.0 * math.sqrt(kk) * math.tanh(e0 / 2.0)


# -- the optimal (KOV) profile ------------------------------------------------------------
def optimal_pure_dp(eps0: Any, k: Any) -> Profile:
    r"""Exact profile of the :math:`k`-fold composition of :math:`\varepsilon_0`-DP
    mechanisms (Kairouz, Oh & Viswanath 2015, Thm 3.3), attained by :math:`k`-fold
    randomized response:

    .. math:: \delta(\varepsilon) = (1 + e^{\varepsilon_0})^{-k}\sum_{i=0}^{k}\binom{k}{i}
              \bigl(e^{(k-i)\varepsilon_0} - e^{\varepsilon + i\varepsilon_0}\bigr)_+ .

    ``eps0`` and ``k`` may be numbers (bound values of :data:`~symgdp.mechanisms.EPS0` and
    :data:`K`) or SymPy symbols.  The expression is the source of truth for symbolic
    work; with both bound, every numeric route (float64, :meth:`~Profile.mp`, ball
    arithmetic and :meth:`~Profile.measure`, certified by default) evaluates the same
    profile through its exact pieces between consecutive loss levels (see the module
    docstring), never the binomial sum, so it is fast and exact at any :math:`k`.

    Example:
        >>> p = optimal_pure_dp(0.2, 50)
        >>> round(p(1.0), 12)
        0.288097646937
    """
    if isinstance(k, sympy.Basic) and not k.is_number:
        if k.is_integer is False or k.is_positive is False:
            raise DomainError(f"k must be a positive integer, got {k}")
        kk, vals = k, {}
    else:
        kk, vals = K, {K: sympy.Integer(check_k(k))}
    if isinstance(eps0, sympy.Basic) and not eps0.is_number:
        if eps0.is_positive is False:
            raise DomainError(f"eps0 must be > 0, got {eps0}")
        e0 = eps0
    else:
        v = sympify_value(eps0)
        if not (v.is_positive and v.is_finite):
            raise DomainError(f"eps0 must be a finite number > 0, got {eps0!r}")
        e0 = EPS0
        vals[EPS0] = v
    return _OptimalProfile(_kov_expr(kk, e0), vals, name="optimal composition",
                           reference="Kairouz, Oh & Viswanath (2015), Theorem 3.3")


@functools.lru_cache(maxsize=16)
def _kov_expr(kk: sympy.Expr, e0: sympy.Expr) -> sympy.Expr:
    """The KOV sum in k and eps0 (built once: SymPy's Max is slow to construct)."""
    term = sympy.binomial(kk, _I) * sympy.Max(
        sympy.exp((kk - _I) * e0) - sympy.exp(_EPS + _I * e0), 0)
    return sympy.Sum(term, (_I, 0, kk)) / (1 + sympy.exp(e0)) ** kk


class _OptimalProfile(Profile):
    """The KOV profile.  The SymPy sum stays the source of truth for symbolic work; with
    eps0 and k bound, every numeric route -- float64, high precision, ball arithmetic and
    the first-order search of :func:`symgdp.measurement.measure.measure` -- uses the exact piecewise
    form of :class:`KovPieces` (no sum is expanded, compiled or differentiated)."""

    __slots__ = ()

    def _pieces(self) -> KovPieces | None:
        c = self._cache
        if "kov" not in c:
            # the expression's only parameters are eps0 and k (free_symbols of the Sum
            # would rebuild it: slow, so the values are looked at directly)
            vals = {s.name: v for s, v in self.values.items()}
            e0, k = vals.get(EPS0.name), vals.get(K.name)
            bound = (self.var == _EPS and e0 is not None and k is not None
                     and not (e0.free_symbols or k.free_symbols))
            c["kov"] = kov_pieces(e0, int(k)) if bound and k is not None else None
        return c["kov"]

    @property
    def unbound_symbols(self) -> set[sympy.Symbol]:
        # eps0 and k bound: nothing else is free (the Sum's own free_symbols is slow)
        return set() if self._pieces() is not None else super().unbound_symbols

    def log_delta(self, eps: Any) -> Any:
        kov = self._pieces()
        if kov is None:
            return super().log_delta(eps)
        from symgdp.pld.curves import eps_array

        eps_array(eps)  # refuses NaN and negative eps
        x = np.asarray(eps, dtype=np.float64)
        out = kov.log_delta(x.reshape(-1)).reshape(x.shape)
        return float(out) if np.ndim(eps) == 0 else out

    def __call__(self, eps: Any) -> Any:
        # Profile.__call__ reads this class's log_delta and rounds its exp up
        return super().__call__(eps)

    def mp(self, eps: Any, *, dps: int = 40) -> mpmath.mpf:
        kov = self._pieces()
        if kov is None:
            return super().mp(eps, dps=dps)
        return kov.mp(eps, dps)

    def _mp_log(self, e: float) -> float:
        kov = self._pieces()
        if kov is None:
            return super()._mp_log(e)
        return kov.log_float(e)

    def refine(self, *, timeout: float | None = None, dps: int = 40) -> Profile:
        # an exact profile of a mechanism: the partial-order refinement leaves it unchanged
        return self if self._pieces() is not None else super().refine(timeout=timeout, dps=dps)

    def validate(self, *, timeout: float | None = None) -> Profile:
        # a profile by Kairouz, Oh & Viswanath's theorem (each term is non-increasing)
        if self._pieces() is None:
            return super().validate(timeout=timeout)
        return self

    def arb_delta(self) -> Callable[[Any], arb] | None:
        """Ball enclosure of the profile (:func:`symgdp.evaluation.interval.profile_arb` uses it),
        ``None`` while a parameter is unbound."""
        kov = self._pieces()
        return None if kov is None else kov.arb_delta

    def first_order(self, *, timeout: float | None = None) -> Any:
        """The first-order machinery of :func:`symgdp.measurement.measure.measure` on the exact
        pieces (``None`` while a parameter is unbound: the generic route then decides)."""
        kov = self._pieces()
        return None if kov is None else kov_first_order(kov)


ROW_LABELS = {
    "basic": "basic composition",
    "advanced": "advanced composition (Dwork, Rothblum & Vadhan)",
    "rdp": "RDP, Mironov Cor. 1 (as in the GDPT paper)",
    "rdp_tight": "RDP, exact curve, improved conversion",
    "gdp": "GDP, per-step mu from pure DP",
    "gdp_laplace": "GDP, per-step mu of Laplace",
    "clt": "CLT (Dong, Roth & Su), approximate",
    "pld": "PLD (certified), randomized-response steps",
    "pld_laplace": "PLD (certified), Laplace steps",
    "gdp_summary_laplace": "GDP summary of the certified Laplace PLD",
    "optimal": "optimal (Kairouz, Oh & Viswanath)",
    "gdp_summary": "GDP summary of the optimal profile",
}


@dataclass(frozen=True)
class CompositionTable(Mapping):
    r"""The comparison table of :func:`table`: a read-only mapping from row name to the
    tuple of :math:`\varepsilon` (one per :math:`\delta`), with the table's parameters.

    Attributes:
        rows: row name → tuple of :math:`\varepsilon`, in display order.
        deltas: the :math:`\delta` of the columns.
        eps0, k: the composed :math:`\varepsilon_0`-DP steps.
        mus: the GDP :math:`\mu` behind each GDP or CLT row.
        approximate: rows that are not guarantees here: approximations (``clt``) and
            ``rdp`` when this table cannot confirm it (see :func:`rdp`).

    Example:
        >>> t = table(0.2, 50, [1e-1, 1e-2], rows=("optimal", "rdp"))
        >>> list(t), t["rdp"]
        (['rdp', 'optimal'], (12.139..., 17.16...))
    """

    rows: Mapping[str, tuple[float, ...]]
    deltas: tuple[float, ...]
    eps0: float
    k: int
    mus: Mapping[str, float] = field(default_factory=dict)
    approximate: tuple[str, ...] = APPROXIMATE_ROWS

    def __post_init__(self) -> None:
        object.__setattr__(self, "rows", MappingProxyType(
            {n: tuple(float(v) for v in r) for n, r in self.rows.items()}))
        object.__setattr__(self, "mus", MappingProxyType(dict(self.mus)))
        object.__setattr__(self, "deltas", tuple(float(d) for d in self.deltas))

    def __getitem__(self, name: str) -> tuple[float, ...]:
        return self.rows[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self.rows)

    def __len__(self) -> int:
        return len(self.rows)

    def __hash__(self) -> int:
        return hash((tuple(self.rows.items()), self.deltas, self.eps0, self.k))

    def _label(self, name: str) -> str:
        text = ROW_LABELS.get(name, name)
        return text + (" [not a guarantee]" if name in self.approximate and
                       "approximate" not in text else "")

    def to_markdown(self, digits: int = 4) -> str:
        r"""A Markdown table: one row per bound, one column per :math:`\delta`.

        Example:
            >>> print(table(0.2, 50, [0.1], rows=("rdp",)).to_markdown())
            | 50-fold 0.2-DP | δ = 0.1 |
            |---|---|
            | RDP, Mironov Cor. 1 (as in the GDPT paper) | 12.14 |
        """
        head = f"| {self.k}-fold {self.eps0:g}-DP | " + " | ".join(
            f"δ = {d:g}" for d in self.deltas) + " |"
        lines = [head, "|---|" + "---|" * len(self.deltas)]
        for name, vals in self.rows.items():
            lines.append(f"| {self._label(name)} | " + " | ".join(
                f"{v:.{digits}g}" for v in vals) + " |")
        return "\n".join(lines)

    def to_latex(self, digits: int = 4) -> str:
        r"""A LaTeX ``tabular`` (booktabs rules).

        Example:
            >>> print(table(0.2, 50, [0.1], rows=("rdp",)).to_latex())  # doctest: +ELLIPSIS
            \begin{tabular}{lr}
            ...
        """
        cols = " & ".join(rf"$\delta = 10^{{{math.log10(d):.0f}}}$"
                          if math.log10(d).is_integer() else rf"$\delta = {d:g}$"
                          for d in self.deltas)
        out = [r"\begin{tabular}{l" + "r" * len(self.deltas) + "}", r"\toprule",
               rf"${self.k}$-fold ${self.eps0:g}$-DP & {cols} \\", r"\midrule"]
        for name, vals in self.rows.items():
            out.append(self._label(name).replace("&", r"\&") + " & " + " & ".join(
                f"{v:.{digits}g}" for v in vals) + r" \\")
        out += [r"\bottomrule", r"\end{tabular}"]
        return "\n".join(out)


def _pld_rows(e0: float, kk: int, d: np.ndarray, disc: float | None, tol: float,
              wanted: set[str]) -> tuple[dict[str, np.ndarray], dict[str, float]]:
    """The PLD rows through the certified composition (:func:`symgdp.compose`): upper
    bounds at every eps, the far tail included, so ``gdp_summary_laplace`` contains the
    mechanism's mu."""
    from symgdp import mechanisms
    from symgdp.accounting.certified import compose

    rows: dict[str, np.ndarray] = {}
    mus: dict[str, float] = {}
    disc_opt = None if disc is None else float(disc)
    if "pld" in wanted:
        p = compose(mechanisms.randomized_response(e0), times=kk, discretization=disc_opt)
        rows["pld"] = np.array([p.eps_at(x).upper for x in d])
    if wanted & {"pld_laplace", "gdp_summary_laplace"}:
        p = compose(mechanisms.laplace(e0), times=kk, discretization=disc_opt)
        rows["pld_laplace"] = np.array([p.eps_at(x).upper for x in d])
        if "gdp_summary_laplace" in wanted:
            mus["gdp_summary_laplace"] = p.mu_upper
            mus["gdp_summary_laplace_floor"] = p.mu_floor
            rows["gdp_summary_laplace"] = eps_gdp(p.mu_upper, d)
    return rows, mus


def table(eps0: float, k: int, deltas: Sequence[float], *, tol: float = 1e-8,
          rows: Sequence[str] | None = None,
          value_discretization_interval: float | None = None) -> CompositionTable:
    r"""Comparison of composition theorems for :math:`k`-fold :math:`\varepsilon_0`-DP:
    a :class:`CompositionTable`, row name → tuple of :math:`\varepsilon`, one per
    :math:`\delta`.  This is Table 1 of the GDPT paper (Liu, Sun, Jiang & Kong, NeurIPS
    2022) with every one of its rows, and more.

    Rows (in :data:`ROWS` order; ``rows=`` selects some):

    * ``basic``, ``advanced``: :func:`basic`, :func:`advanced`;
    * ``rdp``: Mironov's Corollary 1 as the paper used it (:func:`rdp`);
    * ``rdp_tight``: the exact Rényi curve, improved conversion (:func:`rdp_tight`);
    * ``gdp``: per-step :math:`\mu_0 = -2\Phi^{-1}(1/(1 + e^{\varepsilon_0}))` (pure DP),
      composed to :math:`\sqrt{k}\mu_0`;
    * ``gdp_laplace``: per-step :math:`\mu_0` measured from the Laplace profile
      (:func:`laplace_mu`, upper bound), composed;
    * ``clt``: :math:`\varepsilon` of :func:`clt_mu`-GDP, **approximate** (listed in
      ``.approximate``);
    * ``pld``, ``pld_laplace``: :math:`\varepsilon` of the certified composition of
      :math:`k` randomized-response (resp. Laplace) steps (:func:`symgdp.compose`, exact
      integer arithmetic, an upper bound at every :math:`\varepsilon`; grid
      ``value_discretization_interval``, adaptive by default);
    * ``gdp_summary_laplace``: ``mu_upper`` of that certified Laplace composition (the
      mechanism's :math:`\mu` lies in ``[mu_floor, mu_upper]``, ``mus`` holds both), then
      :math:`\varepsilon` at each :math:`\delta`;
    * ``optimal``: :func:`optimal_eps`, exact;
    * ``gdp_summary``: the tightest :math:`\mu` of the optimal profile (:func:`optimal_mu`,
      upper bound), then :math:`\varepsilon` at each :math:`\delta`.

    Every row but ``clt`` (and ``rdp`` where :func:`rdp` says so) is a valid guarantee
    (GDP rows use the guaranteed *upper* bound on :math:`\mu`); ``.approximate`` lists
    the exceptions.  The published table's ``optimal`` row differs from the exact
    one in its last two columns (4.76 and 5.28 printed, 4.7311 and 5.5641 exact): the
    published 5.28 is below the exact optimal value, so it is not a valid guarantee.

    Example:
        >>> t = table(0.2, 50, [1e-1, 1e-2], rows=("optimal",))
        >>> [round(v, 4) for v in t["optimal"]]
        [2.1147, 3.6313]
    """
    e0, kk = check_eps0(eps0), check_k(k)
    _, d = delta_array(list(deltas))
    wanted = set(ROWS if rows is None else rows)
    unknown = wanted - set(ROWS)
    if unknown:
        raise DomainError(f"unknown table rows {sorted(unknown)}; rows are {list(ROWS)}")
    out: dict[str, Any] = {}
    mus: dict[str, float] = {}
    if "basic" in wanted:
        out["basic"] = basic(e0, kk, d)
    if "advanced" in wanted:
        out["advanced"] = advanced(e0, kk, d)
    approximate = [r for r in APPROXIMATE_ROWS if r in wanted]
    if wanted & {"rdp", "rdp_tight"}:
        tight = rdp_tight(e0, kk, d)
        if "rdp_tight" in wanted:
            out["rdp_tight"] = tight
        if "rdp" in wanted:
            out["rdp"] = rdp(e0, kk, d)
            # the formula is a guarantee where it lies above a proven bound
            if np.any(out["rdp"] < tight):
                approximate.append("rdp")
    if "gdp" in wanted:
        mus["gdp"] = gdp(mu_from_pure_dp(e0), kk)
        out["gdp"] = eps_gdp(mus["gdp"], d)
    if "gdp_laplace" in wanted:
        mus["gdp_laplace"] = gdp(laplace_mu(e0, tol=tol)[1], kk)
        out["gdp_laplace"] = eps_gdp(mus["gdp_laplace"], d)
    if "clt" in wanted:
        mus["clt"] = clt_mu(e0, kk)
        out["clt"] = eps_gdp(mus["clt"], d)
    pr, pm = _pld_rows(e0, kk, d, value_discretization_interval, tol, wanted)
    out.update(pr)
    mus.update(pm)
    if "optimal" in wanted:
        out["optimal"] = optimal_eps(e0, kk, d)
    if "gdp_summary" in wanted:
        mus["gdp_summary"] = optimal_mu(e0, kk, tol=tol)[1]
        out["gdp_summary"] = eps_gdp(mus["gdp_summary"], d)
    ordered = {name: tuple(float(v) for v in np.atleast_1d(out[name]))
               for name in ROWS if name in wanted}
    return CompositionTable(rows=ordered, deltas=tuple(float(x) for x in d), eps0=e0, k=kk,
                            mus=mus, approximate=tuple(approximate))
