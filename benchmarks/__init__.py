"""The benchmark suite of ``durations``: ``python -m benchmarks`` (see ``--help``).

Every figure measures its contenders side by side in one process, interleaved round by round,
and reports medians and ratios against a baseline measured in the same run.
"""
