"""Suite-wide settings: results must not depend on how busy the machine is.

Wall-clock limits of polyhedral work are switched off here, for this process and
(through the environment) for every server the tests start; the deterministic isl
operation caps still bound every question. A test about time limits themselves
turns them on locally with `affine_lsp.poly.budgets.time_limits(True)`.

Property tests draw the same examples on every run (hypothesis's `derandomize`), so
a run's outcome depends only on the code; `HYPOTHESIS_PROFILE=explore` draws new
ones, to look for failures worth keeping as an `@example`.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from hypothesis import settings
from hypothesis.configuration import set_hypothesis_home_dir

from affine_lsp.poly.budgets import ENVIRONMENT_VARIABLE, set_time_limits

os.environ[ENVIRONMENT_VARIABLE] = "off"
set_time_limits(False)

# hypothesis keeps its caches outside the source tree.
set_hypothesis_home_dir(Path(tempfile.gettempdir()) / "affine-lsp-hypothesis")
settings.register_profile("suite", derandomize=True, database=None)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "suite"))
