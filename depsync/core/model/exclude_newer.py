"""`exclude-newer` as uv records and compares it (global and per package).

A value in pyproject is a timestamp, a date (the end of that day), a duration ("7 days",
"1 week", "P7D"; uv >= 0.9.17) or, per package, `false` (no cutoff). uv records a duration
as `exclude-newer-span` (ISO 8601, the units as written: "1 week" is `P1W`, "7 days" `P7D`)
next to the cutoff it computed (uv >= 0.10 writes the placeholder `0001-01-01T00:00:00Z`
instead). Whether a lock still fits (uv 0.13.9, measured and read in uv's source):

* added or removed (global, or one package's): stale;
* a duration on one side only, or two durations that differ field by field: stale;
* two equal durations: fresh, whatever the computed cutoffs (uv does not relock on every
  tick of the clock);
* two absolute cutoffs: fresh when the new one is the same or later (nothing locked can be
  too new), stale when it moved earlier.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from depsync.core.lazy_pattern import LazyPattern
from depsync.records import record

if TYPE_CHECKING:  # datetime costs a cold check 2 ms to import; only a project with a cutoff needs it
    from datetime import datetime

_UNITS = {
    "w": "weeks", "wk": "weeks", "wks": "weeks", "week": "weeks", "weeks": "weeks",
    "d": "days", "day": "days", "days": "days",
    "h": "hours", "hr": "hours", "hrs": "hours", "hour": "hours", "hours": "hours",
    "m": "minutes", "min": "minutes", "mins": "minutes", "minute": "minutes", "minutes": "minutes",
    "s": "seconds", "sec": "seconds", "secs": "seconds", "second": "seconds", "seconds": "seconds",
}  # years and months: uv refuses them in configuration
_FIELDS = ("weeks", "days", "hours", "minutes", "seconds")
_FRIENDLY = LazyPattern(r"\s*(\d+)\s*([A-Za-z]+)\s*,?")
_ISO = LazyPattern(r"^[+-]?P(?:(\d+)W)?(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?)?$", re.IGNORECASE)


@record
class Cutoff:
    """One exclude-newer value: disabled (`false`), a duration (span) or an absolute moment."""

    text: str
    span: tuple[int, ...] | None = None  # (weeks, days, hours, minutes, seconds), as written
    moment: datetime | None = None
    disabled: bool = False


def parse_span(text: str) -> tuple[int, ...] | None:
    """A duration, friendly ("7 days", "1 week 2 days") or ISO 8601 ("P7D"), field by field."""
    stripped = text.strip()
    iso = _ISO.match(stripped)
    if iso and any(iso.groups()):
        return tuple(int(g or 0) for g in iso.groups())
    body = stripped.removesuffix("ago").strip().lstrip("+-").strip()
    fields = dict.fromkeys(_FIELDS, 0)
    position, seen = 0, False
    for match in _FRIENDLY.finditer(body):
        if match.start() != position:
            return None
        unit = _UNITS.get(match.group(2).lower())
        if unit is None:
            return None
        fields[unit] += int(match.group(1))
        position, seen = match.end(), True
    if not seen or body[position:].strip():
        return None
    return tuple(fields[f] for f in _FIELDS)


def _moment(text: str) -> datetime | None:
    from datetime import datetime, timedelta, timezone

    value = text.strip()
    try:
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):
            # a date means the end of that day (uv: the next midnight)
            return datetime.fromisoformat(value).replace(tzinfo=timezone.utc) + timedelta(days=1)
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.astimezone(timezone.utc)


def parse_cutoff(value: Any) -> Cutoff | None:
    """A pyproject value (`[tool.uv] exclude-newer` or one `exclude-newer-package` entry)."""
    if value is None:
        return None
    if value is False:
        return Cutoff("false", disabled=True)
    text = str(value)
    moment = _moment(text)
    if moment is not None:
        return Cutoff(text, moment=moment)
    span = parse_span(text)
    if span is not None:
        return Cutoff(text, span=span)
    return Cutoff(text)  # unreadable: compared as text


def recorded_cutoff(timestamp: Any, span: Any = None) -> Cutoff | None:
    """What the lock records: `exclude-newer` (a timestamp) and `exclude-newer-span`, or a
    per-package value (a timestamp, `false`, or a table with both)."""
    if isinstance(timestamp, dict):
        timestamp, span = timestamp.get("timestamp"), timestamp.get("span")
    if timestamp is None and span is None:
        return None
    if timestamp is False:
        return Cutoff("false", disabled=True)
    if span is not None:
        return Cutoff(str(span), span=parse_span(str(span)))
    return Cutoff(str(timestamp), moment=_moment(str(timestamp)))


def change(wanted: Cutoff | None, recorded: Cutoff | None) -> str | None:
    """Why uv would re-resolve, in its words, or None when the recorded cutoff still holds."""
    if wanted is None and recorded is None:
        return None
    if recorded is None:
        return f"added ({wanted.text})"
    if wanted is None:
        return f"removed (the lock was made with {recorded.text})"
    if wanted.disabled or recorded.disabled:
        return None if wanted.disabled == recorded.disabled else f"changed from {recorded.text} to {wanted.text}"
    if (wanted.span is None) != (recorded.span is None):
        return f"changed from {recorded.text} to {wanted.text} (a duration on one side only)"
    if wanted.span is not None:
        return None if wanted.span == recorded.span else f"changed from {recorded.text} to {wanted.text}"
    if wanted.moment is None or recorded.moment is None:
        return None if wanted.text == recorded.text else f"changed from {recorded.text} to {wanted.text}"
    return f"moved earlier, from {recorded.text} to {wanted.text}" if wanted.moment < recorded.moment else None
