"""``python -m durations.trainers``: print ``docs/frameworks.md``."""

from ._report import frameworks_markdown

print(frameworks_markdown(), end="")
