r"""The noise wing: from the density of additive noise to a mechanism's privacy profile.

A researcher designing a mechanism :math:`M(D) = f(D) + Z` writes the noise first; this
wing derives the rest symbolically and keeps every step (loss, monotonicity, threshold,
profile, tail limit, verdict) for the report.  It sits above :mod:`symgdp.mechanisms`
(its results are :class:`~symgdp.profile.Profile` objects like the catalogue's).

Rooms:

* :mod:`~symgdp.noise.density` -- reading and checking a density or a ``sympy.stats``
  random variable (:func:`~symgdp.noise.density.read_density`, :class:`Density`);
* :mod:`~symgdp.noise.loss` -- the privacy loss :math:`L(x) = \log p(x) - \log p(x -
  \Delta)`, its monotonicity (log-concavity) and the threshold :math:`x_\varepsilon`
  (:func:`~symgdp.noise.loss.privacy_loss`);
* :mod:`~symgdp.noise.check` -- the derived profile against a quadrature of its definition;
* :mod:`~symgdp.noise.discrete` -- noise on the integers (a PMF): closed forms where the
  sums have one, else a certified ball summation (:func:`discrete_noise`);
* :mod:`~symgdp.noise.gengauss` -- generalized Gaussian noise :math:`e^{-|x/\sigma|^k}`,
  whose threshold has no closed form: certified in balls (:func:`generalized_gaussian`);
* :mod:`~symgdp.noise.student` -- Student-t and Cauchy noise, not log-concave but with
  level sets that are intervals in closed form: the exact pure-DP profile for integer
  degrees of freedom (:func:`student_t_noise`);
* :mod:`~symgdp.noise.staircase` -- Geng & Viswanath's staircase noise, piecewise constant
  and not log-concave: its exact pure-DP profile from the masses of its three loss values
  (``symgdp.noise.staircase.staircase``; not re-exported here, where the name would hide
  the module);
* :mod:`~symgdp.noise.additive` -- the profile and its derivation record
  (:func:`~symgdp.noise.additive.additive_noise`, :class:`Derivation`).

Exports :func:`additive_noise` (also ``symgdp.additive_noise``), :class:`Derivation`,
:func:`read_density`, :class:`Density`, :func:`privacy_loss`, :func:`discrete_noise`,
:func:`read_pmf`, :func:`generalized_gaussian` and :func:`student_t_noise`.
"""

from symgdp.noise.additive import Derivation, additive_noise
from symgdp.noise.density import Density, read_density
from symgdp.noise.discrete import discrete_noise, read_pmf
from symgdp.noise.gengauss import generalized_gaussian
from symgdp.noise.loss import privacy_loss
from symgdp.noise.student import student_t_noise

__all__ = ["Density", "Derivation", "additive_noise", "discrete_noise",
           "generalized_gaussian", "privacy_loss", "read_density", "read_pmf",
           "student_t_noise"]
