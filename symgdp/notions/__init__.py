r"""Other privacy notions as input: Rényi DP, zero-concentrated DP and trade-off curves.

Each notion here becomes a *numeric source*: an object that gives a proved upper bound on
:math:`\log\delta(\varepsilon)` of the privacy profile that the notion implies, vectorised
over :math:`\varepsilon`.  A :class:`~symgdp.profile.Profile` built on a source measures
that profile like any other.  The protocol (:class:`symgdp.contracts.NumericSource`) is

* ``kind``: a short display name (``"RDP"``, ``"zCDP"``, ``"f-DP"``);
* ``log_delta(x)``: a proved upper bound on :math:`\log\delta(x)` at every ``x >= 0``
  (float64, ``<= 0``, ``-inf`` where :math:`\delta = 0` is proved);
* ``log_delta_lower(x)`` (only where it can be proved): a lower bound on the same
  profile -- the profile that the *notion* implies through the conversion below, which
  is itself only an upper bound on the mechanism's own profile;
* ``tail_limit()``: :math:`\lim_{\varepsilon\to\infty}\varepsilon^2/(-2\log\delta(\varepsilon))`
  of the source's profile as a SymPy expression, or ``None`` when it is not derived;
* ``latex()``: the LaTeX of what the user typed.

**Rényi DP** (Mironov 2017).  A curve :math:`\hat\varepsilon(\alpha)`, :math:`\alpha > 1`,
implies the profile (Canonne, Kamath & Steinke 2020, Prop. 12; Asoodeh, Liao, Calmon,
Kosut & Sankar 2021)

.. math:: \delta(\varepsilon) = \inf_{\alpha > 1} \exp\bigl((\alpha - 1)
          (\hat\varepsilon(\alpha) - \varepsilon)\bigr)\,\frac{1}{\alpha}
          \Bigl(1 - \frac{1}{\alpha}\Bigr)^{\alpha - 1}.

Every single order gives a valid bound, so whatever order the numeric search settles on,
the value at that order (evaluated with outward rounding) is a proved upper bound.  The
tail limit of this profile is :math:`2\lim_{\alpha\to\infty}\hat\varepsilon(\alpha)/\alpha`
(sandwich the infimum between the orders near
:math:`\alpha \approx \varepsilon / (2\rho)` and :math:`(\alpha-1)\log(1-1/\alpha) \ge -1`).
A finite *table* of orders gives a profile that decays only like
:math:`e^{-(\alpha_{\max}-1)\varepsilon}`: its tail limit is :math:`\infty`.

**zCDP** (Bun & Steinke 2016): :math:`(\xi, \rho)`-zCDP is the RDP curve
:math:`\xi + \rho\alpha`.  Here :math:`f(\alpha) = (\alpha-1)(\xi + \rho\alpha - \varepsilon)
+ (\alpha - 1)\log(1 - 1/\alpha) - \log\alpha` is strictly convex
(:math:`f'' = 2\rho + 1/(\alpha(\alpha-1)) > 0`) with
:math:`f'(\alpha) = \xi + \rho(2\alpha - 1) - \varepsilon + \log(1 - 1/\alpha)`; its root has
no elementary closed form, but the order :math:`\hat\alpha = (\varepsilon - \xi + \rho)/(2\rho)`
(the minimiser of Mironov's conversion) gives the closed-form upper bound

.. math:: \delta(\varepsilon) \le \exp\Bigl(-\frac{(\varepsilon - \xi - \rho)^2}{4\rho}\Bigr)
          \frac{1}{\hat\alpha}\Bigl(1 - \frac{1}{\hat\alpha}\Bigr)^{\hat\alpha - 1}
          \quad (\varepsilon > \xi + \rho),

which is below Mironov's :math:`\exp(-(\varepsilon - \xi - \rho)^2/(4\rho))`.  The tail
limit is :math:`2\rho` (:math:`1/\sigma^2` for the Gaussian mechanism, whose curve is
:math:`\alpha/(2\sigma^2)`: the same as its exact GDP profile).  Convexity also gives a
proved *lower* bound on the infimum: with :math:`a < \alpha^* < b` and
:math:`f'(a) < 0 < f'(b)`, :math:`\min f \ge \max(f(a) + f'(a)(b - a), f(b) - f'(b)(b - a))`.

**Trade-off curves** (Dong, Roth & Su 2021).  A trade-off function :math:`T` (convex,
continuous, non-increasing, :math:`T(\alpha) \le 1 - \alpha` on :math:`[0, 1]`) implies
(Prop. 2.12) :math:`\delta(\varepsilon) = 1 + T^*(-e^{\varepsilon}) = \sup_{\alpha\in[0,1]}
(1 - T(\alpha) - e^{\varepsilon}\alpha)`.  When the mechanism is :math:`T`-DP for every
neighbouring pair in both orders this is a valid bound for any :math:`T`; when :math:`T`
is the curve of one ordered pair only (``symmetric=False``), the other order's curve is
:math:`T^{-1}` and the profile is the larger of the two conjugates, the second being
:math:`\sup_\alpha (1 - \alpha - e^{\varepsilon} T(\alpha))` (substitute
:math:`\beta = T(\alpha)`).  On :math:`[p, q]` a non-increasing :math:`T` gives
:math:`1 - T(\alpha) - c\alpha \le 1 - T(q) - cp`, and a convex one lies above the
extension of its chord over :math:`[q, r]`, which bounds the same interval by a linear
function; a branch-and-bound over :math:`[0, 1]` in ball arithmetic (python-flint's
``arb``) refines the intervals until the upper and lower bounds of the supremum agree to
the requested tolerance.  Both bounds use that :math:`T` is a trade-off function; that is
checked on a grid of balls (a counterexample found on the grid is an error), not proved.

The neighbouring relation is whatever the notion was stated for: the conversions hold
pair by pair, so add/remove statements give add/remove profiles, replace-one statements
replace-one profiles.

Rooms: :mod:`~symgdp.notions.common` (the shared helpers and the conversion at one
order), :mod:`~symgdp.notions.rdp` (RDP curves and zCDP as sources),
:mod:`~symgdp.notions.tradeoff` (typed trade-off curves as sources),
:mod:`~symgdp.notions.convexity` and :mod:`~symgdp.notions.tradeoff_mu` (a typed curve's
shape and its :math:`\mu`), :mod:`~symgdp.notions.renyi` (exact Rényi curves of mechanisms,
their composition and conversion), :mod:`~symgdp.notions.conversions` (between notions and
noise calibrations), :mod:`~symgdp.notions.fdp` (trade-off curves of standard mechanisms,
``symgdp.tradeoff``), :mod:`~symgdp.notions.bands` (certified bands on a trade-off curve)
and :mod:`~symgdp.notions.group` (group privacy).

Exports: ``alpha``, the numeric sources (:class:`RdpSource`, :class:`LinearRdpSource`,
:class:`TradeoffSource`) and their constructors (:func:`rdp_source`, :func:`zcdp_source`,
:func:`tradeoff_source`).
"""

from __future__ import annotations

from symgdp.notions.common import alpha
from symgdp.notions.rdp import LinearRdpSource, RdpSource, rdp_source, zcdp_source
from symgdp.notions.tradeoff import TradeoffSource, tradeoff_source

__all__ = [
    "alpha",
    "LinearRdpSource",
    "RdpSource",
    "TradeoffSource",
    "rdp_source",
    "zcdp_source",
    "tradeoff_source",
]
