"""Reviews of fixes: which workaround was tried on which problem, the test re-run the same way, before
and after side by side, and the outcome, kept in a small SQLite store that outlives the session.

The one face of the package:

- :class:`ReviewStore` (``store.py``): the database under the user's data directory; reviews and one
  row per attempt; survives restarts and reboots (an attempt records the boot it started in).
- :func:`plan_items` (``plan.py``): the checklist of a problem: every workaround of the matched
  entries, with what to do and its caveats (reboot, job environment).
- :func:`compare` and :func:`suggest` (``compare.py``): before against after (figures, verdict, P2P
  status, changes between the two snapshots) and the outcome it suggests; the user confirms it.
- :func:`retest` (``retest.py``): runs the test that failed again, the same way (copy test of the pair,
  host-link test of the GPU, NCCL run with the workaround's variables set).
- :func:`site_outcomes` and :func:`outcome_text` (``outcomes.py``): what this site saw per entry and
  workaround ("helped here 3 of 4 times"), for the ranking and the entry screen.
- :func:`trail_markdown` (``trail.py``): the trail for report.md and ticket bundles.

Nothing here imports the UI.
"""

from .compare import Comparison, compare, suggest
from .outcomes import load_site_outcomes, outcome_text, outcomes_from_bundles, rank_key, site_outcomes
from .plan import PlanItem, plan_items, problem_from_result
from .store import STATES, Attempt, Review, ReviewStore, StoreError, default_path
from .trail import trail_dict, trail_markdown

__all__ = [
    "STATES", "Attempt", "Comparison", "PlanItem", "Review", "ReviewStore", "StoreError", "compare",
    "default_path", "load_site_outcomes", "outcome_text", "outcomes_from_bundles", "plan_items", "problem_from_result", "rank_key", "site_outcomes",
    "suggest", "trail_dict", "trail_markdown",
]
