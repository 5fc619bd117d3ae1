"""What a CI base image ships for Python: its interpreter, platform and installed distributions (pure).

The shell reads an image (depsync/shell/runners/image_env.py) by starting the image's own
python on a small read-only script that prints one JSON object per line; this module turns
those lines into an ImageEnv. The lines come from the image, which anyone can build, so every
count and size is capped (depsync/core/limits.py) and whatever does not fit is counted, not kept.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

from depsync.core import limits
from depsync.core.names import canonicalize_name
from depsync.records import field, record

# The format of the reader script's lines; a cached ImageEnv of another format is read again.
FORMAT = 1

# the caps (depsync/core/limits.py); past MAX_DISTRIBUTIONS the rest are counted in `dropped`
MAX_DISTRIBUTIONS = limits.MAX_IMAGE_DISTRIBUTIONS
MAX_REQUIRES = limits.MAX_IMAGE_REQUIRES
MAX_FIELD = limits.MAX_IMAGE_FIELD
MAX_REQUIREMENT = limits.MAX_IMAGE_REQUIREMENT
# Lines read from the reader at all (each at most depsync.core.streaming.MAX_LINE bytes): the
# distributions and a line per note.
MAX_LINES = MAX_DISTRIBUTIONS + 100

_PYTHON_VERSION = re.compile(r"^\d{1,3}\.\d{1,3}(?:\.\d{1,4})?[a-z0-9+.]{0,20}\Z")
_CUDA_VERSION = re.compile(r"^(\d{1,3})(?:\.\d{1,5}){0,4}\Z")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


@record
class ImageDist:
    name: str  # canonical
    version: str
    path: str  # the .dist-info (or .egg-info) directory in the image
    requires: tuple[str, ...] = ()  # Requires-Dist, as written


@record
class ImageEnv:
    """The Python environment of one image, as its own python reported it."""

    reference: str  # as the user or the Dockerfile named it
    image_id: str  # the engine's content id (sha256:...): what the cache is keyed by
    python: str = ""  # "3.12.3"; empty: no python ran in the image
    marker_env: dict[str, str] = field(default_factory=dict)  # PEP 508 marker variables of that python
    distributions: tuple[ImageDist, ...] = ()
    cuda_env: str = ""  # the image config's CUDA_VERSION, when it sets one
    notes: tuple[str, ...] = ()  # what was left out or could not be read, one line each
    dropped: int = 0  # distributions past MAX_DISTRIBUTIONS
    executable: str = ""  # the interpreter that ran

    def by_name(self) -> dict[str, list[ImageDist]]:
        """Canonical name -> the distributions of that name, first on the path first."""
        out: dict[str, list[ImageDist]] = {}
        for dist in self.distributions:
            out.setdefault(dist.name, []).append(dist)
        return out

    def describe(self) -> str:
        python = f"Python {self.python}" if self.python else "no Python"
        return f"{self.reference} ({short_id(self.image_id)}, {python}, {len(self.distributions)} distributions)"

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "reference": self.reference,
            "image_id": self.image_id,
            "python": self.python,
            "marker_env": dict(self.marker_env),
            "distributions": [[d.name, d.version, d.path, list(d.requires)] for d in self.distributions],
            "cuda_env": self.cuda_env,
            "notes": list(self.notes),
            "dropped": self.dropped,
            "executable": self.executable,
        }


def short_id(image_id: str) -> str:
    return image_id.split(":", 1)[-1][:12]


def from_json(data: Any, reference: str) -> ImageEnv | None:
    """A cached ImageEnv (to_json's shape), or None when it is not one of this format."""
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        return None
    try:
        dists = tuple(ImageDist(str(n), str(v), str(p), tuple(str(r) for r in req)) for n, v, p, req in data["distributions"])
        return ImageEnv(
            reference,
            str(data["image_id"]),
            str(data["python"]),
            {str(k): str(v) for k, v in dict(data["marker_env"]).items()},
            dists,
            str(data["cuda_env"]),
            tuple(str(n) for n in data["notes"]),
            int(data["dropped"]),
            str(data.get("executable", "")),
        )
    except (KeyError, TypeError, ValueError):
        return None


def _text(value: Any, limit: int = MAX_FIELD) -> str | None:
    """A string field from the image: a string, cut to limit, without control characters."""
    if not isinstance(value, str):
        return None
    return _CONTROL.sub("?", value[:limit])


def cuda_from_env(env: Iterable[str]) -> str:
    """CUDA_VERSION=12.9.1.010 of an image config's Env list -> "12.9.1.010" ("" when absent or odd)."""
    for item in env:
        if isinstance(item, str) and item.startswith("CUDA_VERSION="):
            value = item.partition("=")[2].strip()
            return value if _CUDA_VERSION.match(value) else ""
    return ""


_MARKER_KEYS = (
    "python_version", "python_full_version", "os_name", "sys_platform", "platform_release", "platform_system",
    "platform_version", "platform_machine", "platform_python_implementation", "implementation_name", "implementation_version",
)  # fmt: skip


def parse_report(lines: Iterable[str], reference: str, image_id: str, config_env: Iterable[str] = ()) -> ImageEnv:
    """The reader script's output (one JSON object per line) -> ImageEnv.

    Lines that are not JSON objects of the expected kinds are counted in a note; a line cut
    by the line bound is not JSON and is counted the same way. The first distribution of a
    name on the path is the one Python imports; later ones are kept (the rules say so)."""
    python, executable = "", ""
    marker_env: dict[str, str] = {}
    dists: list[ImageDist] = []
    notes: list[str] = []
    unreadable = dropped = cut_requires = 0
    for count, line in enumerate(lines):
        if count >= MAX_LINES:
            notes.append(f"the reader printed more than {MAX_LINES} lines; the rest was not read")
            break
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):
            unreadable += 1
            continue
        if not isinstance(record, dict):
            unreadable += 1
            continue
        kind = record.get("k")
        if kind == "python":
            version = _text(record.get("version"), 40) or ""
            python = version if _PYTHON_VERSION.match(version) else ""
            executable = _text(record.get("executable")) or ""
            env = record.get("env")
            if isinstance(env, dict):
                marker_env = {key: _text(env.get(key), 200) or "" for key in _MARKER_KEYS}
        elif kind == "dist":
            name, version, path = (_text(record.get(key)) for key in ("name", "version", "path"))
            if not name or version is None or path is None:
                unreadable += 1
                continue
            if len(dists) >= MAX_DISTRIBUTIONS:
                dropped += 1
                continue
            raw = record.get("requires")
            requires = [r for r in (_text(item, MAX_REQUIREMENT) for item in raw[:MAX_REQUIRES]) if r] if isinstance(raw, list) else []
            if isinstance(raw, list) and len(raw) > MAX_REQUIRES:
                cut_requires += 1
            dists.append(ImageDist(canonicalize_name(name), version.strip(), path, tuple(requires)))
        elif kind == "note":
            text = _text(record.get("text"), 300)
            if text and len(notes) < 20:
                notes.append(text)
        else:
            unreadable += 1
    if unreadable:
        notes.append(f"{unreadable} line{'s' if unreadable != 1 else ''} of the reader's output {'were' if unreadable != 1 else 'was'} not readable and left out")
    if dropped:
        notes.append(f"{dropped} distributions past the first {MAX_DISTRIBUTIONS} were left out")
    if cut_requires:
        notes.append(f"{cut_requires} distributions list over {MAX_REQUIRES} Requires-Dist entries; the first {MAX_REQUIRES} were read")
    if marker_env and python:
        marker_env["python_full_version"] = marker_env.get("python_full_version") or python
    cuda = cuda_from_env(config_env)
    return ImageEnv(reference, image_id, python, marker_env, tuple(dists), cuda, tuple(notes), dropped, executable)


def without_python(reference: str, image_id: str, config_env: Iterable[str], why: str) -> ImageEnv:
    """An image with no python to ask: only what its config says (CUDA_VERSION)."""
    return ImageEnv(reference, image_id, "", {}, (), cuda_from_env(config_env), (why,), 0, "")


def config_env(image: Mapping[str, Any]) -> list[str]:
    """The Env list of an image inspect answer (empty when absent or odd)."""
    config = image.get("Config")
    env = config.get("Env") if isinstance(config, dict) else None
    return [e for e in env if isinstance(e, str)][:1000] if isinstance(env, list) else []
