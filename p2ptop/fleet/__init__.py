"""Many hosts (``p2ptop fleet``): snapshots loaded in parallel, hosts ranked by worst state, each host
against its siblings (same GPU model and topology), as JSON, Markdown or the fleet screen.

The face: :func:`load_fleet` (directories, globs, files), :func:`load_prometheus` (the fleet read back
from Prometheus), :func:`ranked`, :func:`to_json`, :func:`to_markdown`, :func:`to_text`, :func:`state_words`.
"""

from .load import Fleet, expand, load_fleet
from .prometheus import load_prometheus
from .report import groups, ranked, state_words, to_json, to_markdown, to_text

__all__ = ["Fleet", "expand", "groups", "load_fleet", "load_prometheus", "ranked", "state_words", "to_json", "to_markdown", "to_text"]
