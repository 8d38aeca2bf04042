r"""Typed contracts: the string modes of the public functions and the numeric-source protocol.

Defined once here, used in the signatures of every wing (this module imports nothing of
the package, and nothing at run time but :mod:`typing`).  The modes stay plain strings at
run time -- ``delta_mu(1.0, 1.0, rounding="up")`` is unchanged -- and each function still
checks its argument and raises :class:`~symgdp.errors.DomainError` naming a bad value; a
type checker (``python -m mypy symgdp``) now sees a misspelt mode before it runs.

Modes:

* :data:`Rounding` -- the safe side of a float result: ``"up"`` (an upper bound),
  ``"down"`` (a lower bound) or ``"nearest"`` (no direction: not a bound);
* :data:`Neighbouring` -- the neighbouring relation a result assumes: ``"add_remove"``
  (add or remove one record) or ``"replace_one"`` (replace one record).  The DP-SGD and
  composition functions also accept a few spellings (``"replace"``, ``"substitution"``,
  ...) and record the canonical name;
* :data:`MeasureMethod` -- the search of :func:`symgdp.measure` (``"bnb"`` is short for
  ``"branch-and-bound"``; ``"auto"`` is ``"first-order"``);
* :data:`TradeoffMethod` -- how :meth:`symgdp.Profile.from_tradeoff` solves its equation;
* :data:`LimitMethod` -- how a tail limit was found (:class:`symgdp.Identification`);
* :data:`ProgressKind` -- the kind of a :class:`symgdp.ProgressEvent`;
* :data:`FloatKind` -- the compiled float forms of a profile (``"numpy"``: the expression,
  ``"log"``: its log-expanded form, ``"mpmath"``).

:class:`ProfileSource` is what :meth:`symgdp.Profile.from_source` builds a profile on: an
object that gives a proved upper bound on :math:`\log\delta(\varepsilon)` (a PLD, an RDP
curve, a zCDP pair, a trade-off curve).  :class:`NumericSource` is the protocol of
:mod:`symgdp.notions`, which adds the symbolic tail limit and the LaTeX of what the user
typed; a source that can also prove a *lower* bound on the same profile implements
:class:`NumericSourceWithLower`.

Example:
    >>> from typing import get_args
    >>> get_args(Rounding)
    ('up', 'down', 'nearest')
    >>> from symgdp.notions import zcdp_source
    >>> isinstance(zcdp_source(0.5), NumericSource)
    True
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

if TYPE_CHECKING:  # SymPy is not imported at run time by this module
    import sympy

__all__ = ["Rounding", "Neighbouring", "NeighbouringOrAuto", "Sampling", "MeasureMethod",
           "TradeoffMethod", "LimitMethod",
           "ProgressKind", "FloatKind", "ProfileSource", "NumericSource",
           "NumericSourceWithLower"]

#: the safe side of a float result (``"nearest"``: no direction, not a bound)
Rounding = Literal["up", "down", "nearest"]
#: the neighbouring relation a privacy statement assumes
Neighbouring = Literal["add_remove", "replace_one"]
#: a relation, or ``"auto"``: the one a DP-SGD sampling scheme is stated for
NeighbouringOrAuto = Literal["add_remove", "replace_one", "auto"]
#: how DP-SGD draws its batches (``symgdp.training.sampling.SAMPLINGS``)
Sampling = Literal["poisson", "without_replacement", "shuffle", "random_allocation",
                   "truncated_poisson"]
#: the search of :func:`symgdp.measure` (keys of ``symgdp.measurement.measure.METHODS``)
MeasureMethod = Literal["auto", "first-order", "branch-and-bound", "bnb", "staircase"]
#: how :meth:`symgdp.Profile.from_tradeoff` solves the trade-off equation for delta
TradeoffMethod = Literal["auto", "symbolic", "numeric"]
#: how a tail limit was found (``Identification.method``)
LimitMethod = Literal["symbolic", "numeric", "unknown"]
#: the kind of a progress event
ProgressKind = Literal["start", "advance", "end"]
#: the compiled float forms of a profile (``symgdp.evaluation.evaluate``)
FloatKind = Literal["numpy", "log", "mpmath"]


@runtime_checkable
class ProfileSource(Protocol):
    r"""What :meth:`symgdp.Profile.from_source` needs: a proved upper bound on
    :math:`\log\delta(\varepsilon)`, vectorised over :math:`\varepsilon` (the PLD
    sources of :mod:`symgdp.pld.curves` are no more than this).

    Attributes:
        kind: a short display name (``"RDP"``, ``"zCDP"``, ``"f-DP"``, ``"PLD"``).
    """

    kind: str

    def log_delta(self, x: Any) -> Any:
        r"""A proved upper bound on :math:`\log\delta(x)` at every ``x >= 0`` (float64,
        ``<= 0``, ``-inf`` where :math:`\delta = 0` is proved), with the shape of ``x``."""


@runtime_checkable
class NumericSource(ProfileSource, Protocol):
    r"""A privacy notion as a profile source (the protocol of :mod:`symgdp.notions`): the
    bound of :class:`ProfileSource`, its symbolic tail limit and its LaTeX."""

    def tail_limit(self) -> sympy.Expr | None:
        r""":math:`\lim_{\varepsilon\to\infty}\varepsilon^2/(-2\log\delta(\varepsilon))` of
        the source's profile as a SymPy expression, or ``None`` when it is not derived."""

    def latex(self) -> str:
        """The LaTeX of what the user typed."""


@runtime_checkable
class NumericSourceWithLower(NumericSource, Protocol):
    """A numeric source that can also prove a lower bound on the same profile."""

    def log_delta_lower(self, x: Any) -> Any:
        r"""A proved lower bound on the source's :math:`\log\delta(x)` (the profile the
        notion implies, itself only an upper bound on the mechanism's own profile)."""
