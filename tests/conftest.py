"""Suite-wide settings: results must not depend on how busy the machine is.

Wall-clock limits of polyhedral work are switched off here, for this process and
(through the environment) for every server the tests start; the deterministic isl
operation caps still bound every question. A test about time limits themselves
turns them on locally with `affine_lsp.poly.budgets.time_limits(True)`.
"""

from __future__ import annotations

import os

from affine_lsp.poly.budgets import ENVIRONMENT_VARIABLE, set_time_limits

os.environ[ENVIRONMENT_VARIABLE] = "off"
set_time_limits(False)
