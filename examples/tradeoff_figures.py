r"""Trade-off curves of J. Dong's "How private are private algorithms?", as certified bands.

Four panels, each curve drawn as a guaranteed band ``lower <= f(alpha) <= upper``
(:func:`symgdp.notions.fdp.band`; Dong, Roth & Su 2021):

(a) randomized response and the Laplace mechanism, :math:`\varepsilon_0 = 1` (their exact
    curves in ball arithmetic);
(b) the classical Gaussian mechanism calibrated to :math:`(\varepsilon, \delta) = (1,
    10^{-3})` and :math:`(4, 10^{-3})`, :math:`\sigma = \sqrt{2\log(1.25/\delta)}/\varepsilon`
    (its curve is :math:`G_{1/\sigma}`), against its design goal :math:`f_{\varepsilon,
    \delta}(\alpha) = \max(0, 1 - \delta - e^{\varepsilon}\alpha, e^{-\varepsilon}(1 -
    \delta - \alpha))`;
(c) 25-fold randomized response and 25-fold Laplace, :math:`\varepsilon_0 = 0.2`
    (certified compositions, :func:`symgdp.compose`), against the central limit theorem's
    :math:`G_\mu` (Dong, Roth & Su 2021, Thm 3.5: :math:`\mu = 2K/s` with :math:`K` the sum
    of the steps' KL divergences and :math:`s^2` of their second moments of the privacy
    loss; :math:`2\sqrt{k}\tanh(\varepsilon_0/2) \approx 0.997` for randomized response,
    :func:`symgdp.accounting.pure_dp.clt_mu`);
(d) 2-fold Laplace, :math:`\varepsilon_0 = 1`, against its CLT :math:`G_\mu` (too few
    steps for the approximation: the band shows by how much it misses).

The bands assume what :func:`~symgdp.notions.fdp.band` assumes: the profile of a symmetric
pair (add/remove with the worse direction, or replace-one).  By default the settings are
small (a few seconds, as run in CI); ``--full`` draws the paper-quality version (finer
:math:`\alpha` grid, tighter bands, adaptive composition grids).  Written as PNG and as a
vector PDF with embedded fonts (:func:`symgdp.present.plot.save`).
"""

from __future__ import annotations

import math
from pathlib import Path

import _common
import mpmath
import numpy as np
from _common import save_figure
from matplotlib.figure import Figure

from symgdp import compose, mechanisms, plot, tradeoff
from symgdp.accounting.pure_dp import clt_mu


def classical_sigma(eps: float, delta: float) -> float:
    """The classical Gaussian mechanism's noise: sqrt(2 log(1.25/delta)) / eps."""
    return math.sqrt(2.0 * math.log(1.25 / delta)) / eps


def laplace_clt_mu(eps0: float, k: int) -> float:
    r"""Dong, Roth & Su's CLT :math:`\mu = 2K/s` for :math:`k` Laplace steps of
    :math:`\varepsilon_0`: per step, the KL divergence :math:`\varepsilon_0 +
    e^{-\varepsilon_0} - 1` and the second moment of the privacy loss
    :math:`L = \varepsilon_0(|x - 1| - |x|)` under :math:`x \sim \mathrm{Lap}(0,
    1/\varepsilon_0)` (40 digits).  **An approximation**, not a bound."""
    with mpmath.workdps(40):
        e = mpmath.mpf(eps0)
        kl = e + mpmath.exp(-e) - 1
        inner = mpmath.quad(lambda x: (e * (1 - 2 * x)) ** 2 * e / 2 * mpmath.exp(-e * x),
                            [0, 1])
        kappa2 = e**2 / 2 + e**2 * mpmath.exp(-e) / 2 + inner
        return float(2 * k * kl / mpmath.sqrt(k * kappa2))


def main(argv: list[str] | None = None) -> int:
    p = _common.parser(__doc__, Path(__file__).resolve().parent / "out")
    p.add_argument("--full", action="store_true",
                   help="paper-quality settings (the default is small, as --small)")
    args = _common.parse(p, argv)
    args.small = not args.full
    if args.full:
        alpha = np.linspace(0.0, 1.0, 401)
        opts: dict = {"tol": 1e-10}
        disc = None  # adaptive composition grid
    else:
        alpha = np.linspace(0.0, 1.0, 41)
        opts = {"tol": 1e-6}
        disc = 2e-3

    fig = Figure(figsize=(7.0, 7.6), layout="constrained")
    (ax_a, ax_b), (ax_c, ax_d) = fig.subplots(2, 2)

    # (a) one step of eps0 = 1
    rr = mechanisms.randomized_response(1.0).tradeoff(alpha, **opts)
    lap = mechanisms.laplace(1.0).tradeoff(alpha, **opts)
    plot.tradeoff(rr, lap, ax=ax_a, legend="below",
                  labels=["randomized response", "Laplace"],
                  title=r"(a) $\varepsilon_0 = 1$")

    # (b) the classical Gaussian mechanism against its (eps, delta) design goal
    bands, curves, labels = [], [], []
    for eps in (1.0, 4.0):
        sigma = classical_sigma(eps, 1e-3)
        bands.append(mechanisms.gaussian(sigma=sigma).tradeoff(alpha, **opts))
        curves.append(tradeoff.eps_delta(eps, 1e-3))
        labels.append(rf"Gaussian for $\varepsilon = {eps:g}$: $\sigma = {sigma:.3g}$")
    plot.tradeoff(*bands, *curves, ax=ax_b, legend="below",
                  labels=labels + [r"$f_{1,10^{-3}}$", r"$f_{4,10^{-3}}$"],
                  title=r"(b) classical Gaussian, $\delta = 10^{-3}$")

    # (c) 25-fold composition of eps0 = 0.2 against the CLT
    k, e0 = 25, 0.2
    rr25 = compose(mechanisms.randomized_response(e0), times=k, discretization=disc)
    lap25 = compose(mechanisms.laplace(e0), times=k, discretization=disc)
    mu_rr, mu_lap = clt_mu(e0, k), laplace_clt_mu(e0, k)
    plot.tradeoff(rr25.tradeoff(alpha, **opts), lap25.tradeoff(alpha, **opts),
                  mu=[mu_rr, mu_lap], ax=ax_c, legend="below",
                  labels=[f"{k}-fold randomized response", f"{k}-fold Laplace"],
                  title=rf"(c) ${k}$-fold, $\varepsilon_0 = {e0:g}$; dashed: CLT")

    # (d) 2-fold Laplace, eps0 = 1
    lap2 = compose(mechanisms.laplace(1.0), times=2, discretization=disc)
    mu_lap2 = laplace_clt_mu(1.0, 2)
    plot.tradeoff(lap2.tradeoff(alpha, **opts), mu=mu_lap2, ax=ax_d, legend="below",
                  labels=["2-fold Laplace"],
                  title=r"(d) 2-fold Laplace, $\varepsilon_0 = 1$; dashed: CLT")

    path = save_figure(fig, args, "tradeoff_figures")
    print(f"CLT mu: {k}-fold randomized response {mu_rr:.4f}, {k}-fold Laplace "
          f"{mu_lap:.4f}, 2-fold Laplace {mu_lap2:.4f} (approximations, not bounds)")
    print(f"certified GDP brackets: {k}-fold randomized response "
          f"[{rr25.mu_floor:.4f}, {rr25.mu_upper:.4f}], {k}-fold Laplace "
          f"[{lap25.mu_floor:.4f}, {lap25.mu_upper:.4f}], 2-fold Laplace "
          f"[{lap2.mu_floor:.4f}, {lap2.mu_upper:.4f}]")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
