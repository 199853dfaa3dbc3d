"""Tickets: everything a person attaches to an issue about a GPU host.

- :mod:`.bundle` ``write_bundle``: the folder (screenshot.svg/.txt/.png, report.md, snapshot.json).
- :mod:`.report` ``build_report``: report.md, paste-ready in a GitHub or Jira issue.
- :mod:`.redact` ``Redactor``: hostnames, serials, UUIDs and IP addresses replaced consistently.
- :mod:`.markdown`: untrusted text (NVML, logs, knowledge base) made safe for Markdown.
- :mod:`.png`: the screenshot SVG rendered to PNG offline with an installed monospace font.
"""
