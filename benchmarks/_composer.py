"""Composer's ``composer.core.time`` loaded alone from the mosaicml 0.32.1 wheel.

``composer.core.time`` imports only ``composer.core.serializable`` and
``composer.utils.StringEnum``. Importing the real ``composer`` package would pull in torch and
most of Composer, so these three modules are executed from the wheel's own source, under stub
packages ``composer``, ``composer.core`` and ``composer.utils`` that contain nothing else.

Composer's schedulers (``composer.optim.scheduler``) are loaded the same way, on request
(:func:`composer_schedulers`): the module imports ``torch.optim.lr_scheduler`` (the real torch,
which must be installed) and ``State``, ``Time``, ``TimeUnit`` from ``composer.core``; ``State``
is only named in annotations there, so the stub's ``State`` is an empty class.
"""

from __future__ import annotations

import os
import subprocess
import sys
import types
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

VERSION = "0.32.1"
WHEEL = f"mosaicml-{VERSION}-py3-none-any.whl"
_MODULES = (
    ("composer.core.serializable", "composer/core/serializable.py"),
    ("composer.utils.string_enum", "composer/utils/string_enum.py"),
    ("composer.core.time", "composer/core/time.py"),
)


@dataclass(frozen=True)
class ComposerTime:
    """What the benchmarks use from Composer, and where it came from."""

    time: Any  # composer.core.time.Time
    timestamp: Any  # composer.core.time.Timestamp
    source: str
    wheel: Path


def cache_dir() -> Path:
    """Where the wheel is kept between runs (outside the repository)."""
    root = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(root) / "durations-benchmarks"


def find_wheel(explicit: str | None, *, fetch: bool) -> tuple[Path | None, str]:
    """The wheel to load, or ``None`` and the reason it is missing.

    ``explicit`` is a path given on the command line; otherwise the cache is searched, and
    with ``fetch`` the wheel is downloaded there with ``pip download --no-deps``.
    """
    if explicit is not None:
        path = Path(explicit)
        if path.is_file():
            return path, ""
        return None, f"--composer-wheel {explicit}: no such file"
    cached = cache_dir() / WHEEL
    if cached.is_file():
        return cached, ""
    if not fetch:
        return None, (
            f"the mosaicml {VERSION} wheel is not in {cache_dir()} and fetching is off; "
            "run without --no-fetch/--quick once, or pass --composer-wheel PATH"
        )
    cache_dir().mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-m", "pip", "download", "--no-deps", f"mosaicml=={VERSION}"]
    try:
        done = subprocess.run(
            [*command, "-d", str(cache_dir())], capture_output=True, text=True, timeout=300
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        return None, f"pip download mosaicml=={VERSION} failed: {error}"
    if done.returncode != 0 or not cached.is_file():
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        return None, f"pip download mosaicml=={VERSION} failed: {tail[0]}"
    return cached, ""


def _package(name: str) -> types.ModuleType:
    """An empty package: no submodule can be imported from it by accident."""
    module = types.ModuleType(name)
    module.__path__ = []
    sys.modules[name] = module
    return module


def load(wheel: Path) -> ComposerTime:
    """Execute the three modules from ``wheel`` under stub packages; return Time, Timestamp."""
    if "composer" in sys.modules and not getattr(sys.modules["composer"], "_stub", False):
        raise RuntimeError("a real composer package is already imported; not stubbing it")
    root = _package("composer")
    root._stub = True  # type: ignore[attr-defined]
    core = _package("composer.core")
    utils = _package("composer.utils")
    root.core = core  # type: ignore[attr-defined]
    root.utils = utils  # type: ignore[attr-defined]
    loaded: dict[str, types.ModuleType] = {}
    with zipfile.ZipFile(wheel) as archive:
        for name, member in _MODULES:
            source = archive.read(member).decode()
            module = types.ModuleType(name)
            module.__file__ = f"{wheel}/{member}"
            sys.modules[name] = module
            exec(compile(source, module.__file__, "exec"), module.__dict__)
            loaded[name] = module
            if name == "composer.utils.string_enum":
                utils.StringEnum = module.StringEnum  # type: ignore[attr-defined]
    time_module = loaded["composer.core.time"]
    return ComposerTime(
        time=time_module.Time,
        timestamp=time_module.Timestamp,
        source=(
            f"composer.core.time from {wheel.name} (with composer.core.serializable and "
            "composer.utils.string_enum), executed under stub composer/composer.utils packages; "
            "the rest of Composer (and torch) is not imported"
        ),
        wheel=wheel,
    )


def composer_time(explicit: str | None, *, fetch: bool) -> tuple[ComposerTime | None, str]:
    """Composer's time classes, or ``None`` and why they are unavailable."""
    wheel, reason = find_wheel(explicit, fetch=fetch)
    if wheel is None:
        return None, reason
    try:
        return load(wheel), ""
    except Exception as error:  # a broken wheel must not stop the other contenders
        return None, f"loading composer.core.time from {wheel} failed: {error!r}"


class State:
    """The stub of ``composer.core.State``: the schedulers name it in annotations only (they
    read ``max_duration``, ``timestamp`` and ``dataloader_len`` of the state they are given)."""


def composer_schedulers(composer: ComposerTime | None) -> tuple[types.ModuleType | None, str]:
    """``composer.optim.scheduler`` from the wheel ``composer`` came from, or ``None`` and why.

    Executed once, under a stub ``composer.optim`` package, with the stub ``composer.core``
    given ``State`` (above) and the wheel's own ``Time`` and ``TimeUnit``.
    """
    if composer is None:
        return None, "composer.core.time is not loaded"
    name = "composer.optim.scheduler"
    if name in sys.modules:
        return sys.modules[name], ""
    try:
        __import__("torch.optim.lr_scheduler")
    except ImportError as error:
        return None, f"composer.optim.scheduler imports torch, which is not importable ({error})"
    core = sys.modules["composer.core"]
    time_module = sys.modules["composer.core.time"]
    core.State = State  # type: ignore[attr-defined]
    core.Time = time_module.Time  # type: ignore[attr-defined]
    core.TimeUnit = time_module.TimeUnit  # type: ignore[attr-defined]
    optim = _package("composer.optim")
    sys.modules["composer"].optim = optim  # type: ignore[attr-defined]
    try:
        with zipfile.ZipFile(composer.wheel) as archive:
            source = archive.read("composer/optim/scheduler.py").decode()
        module = types.ModuleType(name)
        module.__file__ = f"{composer.wheel}/composer/optim/scheduler.py"
        sys.modules[name] = module
        exec(compile(source, module.__file__, "exec"), module.__dict__)
    except Exception as error:  # a broken wheel must not stop the other contenders
        sys.modules.pop(name, None)
        return None, f"loading {name} from {composer.wheel} failed: {error!r}"
    return module, ""
