"""Keep secrets out of every message: credentials in URLs and values of secret-looking variables."""

from __future__ import annotations

import os
import re

_URL_CREDENTIALS = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)(?P<userinfo>[^/@\s'\"]+)@")
_SECRET_NAME = re.compile(r"(TOKEN|PASSWORD|SECRET|_KEY|CREDENTIALS?|AUTH)", re.IGNORECASE)
MASK = "***"


def secret_values(environ: dict[str, str] | None = None) -> list[str]:
    """Values of environment variables whose names look secret, and credentials inside UV_INDEX_* URLs."""
    environ = dict(os.environ) if environ is None else environ
    values = []
    for name, value in environ.items():
        if len(value) < 4:
            continue
        if _SECRET_NAME.search(name):
            values.append(value)
        if name.startswith(("UV_INDEX", "UV_EXTRA_INDEX", "UV_DEFAULT_INDEX", "PIP_INDEX", "PIP_EXTRA_INDEX")):
            for match in _URL_CREDENTIALS.finditer(value):
                values.append(match.group("userinfo"))
    return sorted(set(values), key=len, reverse=True)


def redact(text: str, extra: list[str] | None = None) -> str:
    """text with URL userinfo (`https://user:token@host`) and known secret values masked."""
    text = _URL_CREDENTIALS.sub(lambda m: f"{m.group('scheme')}{MASK}@", text)
    for value in [*secret_values(), *(extra or [])]:
        if value:
            text = text.replace(value, MASK)
    return text
