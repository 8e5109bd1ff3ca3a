"""The project's promises about itself: public names, the README's commands, the shipped files."""

from __future__ import annotations

import re
from pathlib import Path

import durations

ROOT = Path(__file__).resolve().parent.parent


def _readme_commands() -> list[str]:
    return re.findall(r"```sh\n(.*?)\n```", (ROOT / "README.md").read_text(), re.DOTALL)


def test_ci_runs_the_readme_commands() -> None:
    """.ci/run runs both README commands verbatim, so neither can rot unnoticed."""
    commands = _readme_commands()
    assert len(commands) == 2
    ci = (ROOT / ".ci" / "run").read_text()
    for command in commands:
        assert command in ci


def test_public_names_are_documented() -> None:
    """Every public name is in the reference, and the reference names nothing that is gone."""
    reference = (ROOT / "docs" / "reference.md").read_text()
    documented = set(re.findall(r"^### `(\w+)`", reference, re.MULTILINE))
    assert documented == set(durations.__all__)


def test_typed_marker_is_shipped() -> None:
    """The package declares its annotations to type checkers."""
    assert (ROOT / "durations" / "py.typed").exists()


#: Modules that are shells around the core (command line, integrations): they may do I/O.
SHELLS = {
    "cli.py", "__main__.py", "readers.py", "_files.py", "testing.py", "_hypothesis.py", "_plot.py",
    "adapter.py", "_conformance_run.py",
}  # fmt: skip
#: Packages of shells: framework integrations import their framework (lazily).
SHELL_PACKAGES = {"integrations"}


def test_core_imports_no_framework() -> None:
    """The pure core imports nothing beyond the standard library and attrs, and does no I/O."""
    allowed = {"attrs", "durations", "__future__"}
    stdlib = {
        "array", "bisect", "collections", "decimal", "difflib", "enum", "fractions", "functools",
        "hashlib", "importlib", "itertools", "json", "math",
        "numbers", "random", "re", "textwrap", "tomllib", "typing",
    }  # fmt: skip
    for module in (ROOT / "durations").rglob("*.py"):
        if module.name in SHELLS or module.parent.name in SHELL_PACKAGES:
            continue
        for name in re.findall(r"^(?:from|import) (\w+)", module.read_text(), re.MULTILINE):
            assert name in allowed | stdlib, f"{module.name} imports {name}"


def _imports(module: Path) -> set[str]:
    """The modules of durations that ``module`` imports, as dotted names (relative imports
    resolved), lazily imported ones included."""
    package = module.relative_to(ROOT).with_suffix("").parts[:-1]
    found = set()
    for dots, name in re.findall(r"^\s*from (\.+)([\w.]*) import", module.read_text(), re.M):
        base = package[: len(package) - len(dots) + 1]
        found.add(".".join((*base, name) if name else base))
    return found


def test_the_readers_read_in_one_direction() -> None:
    """One reading layer (durations/_files.py) under both readers; the command line's reader
    may take the torch readers, which never take it back (no import circle)."""
    files = ROOT / "durations" / "_files.py"
    torch_readers = ROOT / "durations" / "integrations" / "checkpoints.py"
    keras = ROOT / "durations" / "integrations" / "keras.py"
    assert not {"durations.readers", "durations.integrations"} & _imports(files)
    assert "durations.readers" not in _imports(torch_readers)
    assert "durations.readers" not in _imports(keras)
    assert "durations._files" in _imports(torch_readers) & _imports(ROOT / "durations/readers.py")


def test_every_diagnostic_code_is_documented() -> None:
    """The diagnostics table of semantics.md lists exactly the codes the planner can raise."""
    from durations.diagnostics import CODES

    semantics = (ROOT / "docs" / "semantics.md").read_text()
    table = dict(re.findall(r"^\| `([a-z-]+)` \| (error|warning|info) \|", semantics, re.MULTILINE))
    assert table == {code: severity.value for code, severity in CODES.items()}


def test_every_public_name_resolves() -> None:
    """Each name of __all__ loads on first use, and `plan` is the function, not a module."""
    import inspect

    for name in durations.__all__:
        assert getattr(durations, name) is not None
    assert inspect.isfunction(durations.plan)
    assert set(durations.__all__) <= set(dir(durations))


def test_unknown_attribute() -> None:
    """A name the package does not export is the usual AttributeError."""
    import pytest

    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        _ = durations.nope  # type: ignore[attr-defined]


def test_frameworks_page_is_generated() -> None:
    """docs/frameworks.md is exactly what the trainer profiles generate (it cannot drift)."""
    from durations.trainers._report import frameworks_markdown

    assert (ROOT / "docs" / "frameworks.md").read_text() == frameworks_markdown()


def test_every_repository_path_the_docs_name_exists() -> None:
    """Every ``examples/``, ``tests/``, ``docs/`` or ``benchmarks/`` file named in the README,
    and the docs is there (a renamed example once left the README
    pointing at nothing)."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    pattern = re.compile(
        r"(?<![\w/.-])((?:examples|tests|docs|benchmarks)/[\w./-]*\.(?:toml|json|py|md))"
    )
    missing = []
    for page in pages:
        for name in pattern.findall(page.read_text()):
            if not (ROOT / name).exists() and not (page.parent / name).exists():
                missing.append(f"{page.name}: {name}")
    assert missing == []
