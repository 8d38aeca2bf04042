"""Shared pytest configuration."""

from __future__ import annotations

import os

import matplotlib

matplotlib.use("Agg")

from hypothesis import settings  # noqa: E402

settings.register_profile("ci", deadline=None, max_examples=60, derandomize=True)
settings.register_profile("dev", deadline=None, max_examples=100)
settings.load_profile("ci" if os.environ.get("CI") else "dev")
