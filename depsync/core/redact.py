"""Keep secrets out of every message: credentials in URLs, secret query parameters and headers,
and the values of secret-looking environment variables.

Every pattern runs in time linear in the text. Each regex below either starts at a fixed
literal (`://`, `authorization`) or only at the start of a token (a lookbehind on the
delimiter), and its repeated parts cannot run across the start of another candidate, so no
stretch of text is scanned more than a constant number of times. The old
`[A-Za-z][A-Za-z0-9+.-]*://` pattern restarted its scan at every letter of a long run.
"""

from __future__ import annotations

import _thread  # its RLock; threading itself costs a cold check 1 ms to import
import os
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TextIO

from depsync.core.lazy_pattern import LazyPattern

MASK = "***"

# Token delimiters: whitespace, quotes, brackets, `|` (Markdown tables), `\` (escapes in
# JSON strings). None of them is legal unencoded in a URL's userinfo or a query value.
_D = r"\s\"'`<>()\[\]{}|\\"

# `scheme://userinfo@host`: the authority ends at the first `/`, `?` or `#`, the userinfo at
# the last `@` before it (greedy). A bare `git@` (the ssh convention) is not a secret.
_URL_USERINFO = re.compile(rf"://(?!git@(?![^{_D}/?#]*@))(?P<userinfo>[^{_D}/?#]*)@")

# `?token=...`, `&X-Amz-Signature=...`, `password=...` at a token start: the value, up to
# `&`, `#` or a delimiter. Names are runs of [A-Za-z0-9_.-], so two candidates never overlap.
_PARAM_NAME = (
    r"[A-Za-z0-9_.-]*?(?:token|secret|password|passwd|signature|credentials?|api_?key)"
    r"|sig|key|auth"
)
_SECRET_PARAM = re.compile(rf"(?<![^?&;{_D}])(?P<name>(?i:{_PARAM_NAME}))=[^&#{_D}]+")

# scp-like `user:password@host:path` at a token start; `git@host:path` has no password and
# `image:tag@sha256:digest` is a Docker digest, not a credential.
_SCP_PASSWORD = LazyPattern(
    rf"(?<![^{_D}])(?P<user>[A-Za-z0-9_.-]+):[^{_D}/]+@(?!sha\d+:)(?P<host>[A-Za-z0-9_.-]+):"
)

# `Authorization: Bearer x`, `"Authorization": "Basic x"`, `-H 'authorization: token x'`.
_AUTH_HEADER = re.compile(
    r"(?i)(?P<head>authorization[\"']?[ \t]*[:=][ \t]*[\"']?(?:bearer|basic|token)[ \t]+)[^\s\"',;]+"
)

# AUTH but not AUTHOR (GIT_AUTHOR_NAME is a name), though AUTHORIZATION is a credential
_SECRET_NAME = re.compile(r"TOKEN|PASSWORD|PASSWD|SECRET|_KEY|APIKEY|CREDENTIAL|AUTH(?!OR(?!IZ))", re.IGNORECASE)
_INDEX_VARIABLES = ("UV_INDEX", "UV_EXTRA_INDEX", "UV_DEFAULT_INDEX", "PIP_INDEX", "PIP_EXTRA_INDEX")
_NOT_SECRETS = frozenset({"true", "false", "none", "null"})  # flags, not credentials
_MIN_SECRET = 4  # shorter values would mask ordinary words and numbers


def _is_secret_name(name: str) -> bool:
    return _SECRET_NAME.search(name) is not None


def _worth_masking(value: str) -> bool:
    return len(value) >= _MIN_SECRET and value.lower() not in _NOT_SECRETS


def _url_credentials(value: str, *, usernames: bool) -> list[str]:
    """userinfo of the URLs in value, and the password part alone (it may be printed on its own).

    A username without a password is only taken when asked (index URLs, where it may be a token):
    elsewhere it is usually an ordinary word that masking everywhere would mangle."""
    found = []
    for match in _URL_USERINFO.finditer(value):
        userinfo = match.group("userinfo")
        user, colon, password = userinfo.partition(":")
        if colon:
            found += [userinfo, password]
        elif usernames:
            found.append(userinfo)
    return found


def _variable_secrets(name: str, value: str) -> list[str]:
    found = _url_credentials(value, usernames=name.startswith(_INDEX_VARIABLES))
    if _is_secret_name(name):
        found.append(value)
        # the stream wrapper redacts line by line, so each line of a multi-line secret counts too
        found += [line.strip() for line in value.splitlines()] if "\n" in value else []
    return found


def secret_values(environ: Mapping[str, str] | None = None) -> list[str]:
    """Values of environment variables whose names look secret, and credentials inside URL
    variables (UV_INDEX_*, PIP_INDEX_URL, proxies...), longest first."""
    if environ is None:
        return list(_process_secrets())
    values = {secret for name, value in environ.items() for secret in _variable_secrets(name, value)}
    return sorted((v for v in values if _worth_masking(v)), key=lambda v: (-len(v), v))


_cached: tuple[dict[Any, Any] | None, tuple[str, ...]] = (None, ())


def _process_secrets() -> tuple[str, ...]:
    """secret_values(os.environ), recomputed only when the environment changed: every line
    written to stdout or stderr asks for them."""
    global _cached
    # the raw bytes mapping, compared as a dict (one C-level comparison, no decoding: one finding
    # per source of 20k sources spent seconds decoding the environment, and building a tuple of
    # it per call was a tenth of a cold check's rules)
    raw = getattr(os.environ, "_data", None)
    current = raw if isinstance(raw, dict) else dict(os.environ)
    if current != _cached[0]:
        _cached = (dict(current), tuple(secret_values(dict(os.environ))))
    return _cached[1]


def _mask_patterns(text: str) -> str:
    # each pattern needs a literal: checking for it first spares ordinary text a scan.
    # Query values first: one may hold a whole URL, which it then masks as a unit.
    if "=" in text:
        text = _SECRET_PARAM.sub(lambda m: f"{m.group('name')}={MASK}", text)
    if "://" in text:
        text = _URL_USERINFO.sub(f"://{MASK}@", text)
    if "@" in text:
        text = _SCP_PASSWORD.sub(lambda m: f"{m.group('user')}:{MASK}@{m.group('host')}:", text)
    if ":" in text or "=" in text:
        text = _AUTH_HEADER.sub(lambda m: m.group("head") + MASK, text)
    return text


def _mask_values(text: str, values: Iterable[str]) -> str:
    # str.replace is a linear scan per value; longest first so a value's prefix cannot win
    for value in sorted(set(values), key=lambda v: (-len(v), v)):
        if value not in MASK:  # "", "*", "**" and MASK itself would grow on every pass
            text = text.replace(value, MASK)
    return text


def redact(text: str, extra: list[str] | None = None) -> str:
    """text with URL userinfo, secret query values, scp-style passwords, Authorization header
    values, secret environment values and `extra` masked. Idempotent (unless a secret value
    itself contains `*`); text without secrets is returned unchanged."""
    if not text:
        return text
    # values first: masking one may join two tokens, and the patterns then see the joined token,
    # as they will on a second pass (the patterns never create a value: any new one holds `*`)
    return _mask_patterns(_mask_values(text, [*secret_values(), *(extra or [])]))


class RedactingStream:
    """A text stream that redacts what is written before passing it on.

    Text is held back until a line ends (`\\n` or `\\r`), so a secret written in pieces is
    still seen whole; flush() and close() pass on the held-back rest. Everything else
    (isatty, fileno, encoding, errors...) is the wrapped stream's, except `buffer`: bytes
    written there would skip redaction. Exceptions from the wrapped stream (BrokenPipeError)
    propagate as they are. close() does not close the wrapped stream: it belongs to the
    caller (usually sys.stdout). `inert`, when given, is applied to every redacted piece too
    (whole lines but for the rest that flush() passes on): the CLI makes workflow commands inert with it."""

    def __init__(self, stream: TextIO, extra: list[str] | None = None, inert: Callable[[str], str] | None = None) -> None:
        self._stream = stream
        self._extra = list(extra or [])
        self._inert = inert or (lambda text: text)
        self._pending: list[str] = []
        self._closed = False
        # rich's live display writes from its own thread; a signal handler may print mid-write
        self._lock = _thread.RLock()

    def write(self, text: str) -> int:
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        if self._closed:
            raise ValueError("I/O operation on closed file")
        cut = max(text.rfind("\n"), text.rfind("\r")) + 1
        with self._lock:
            if not cut:
                self._pending.append(text)
                return len(text)
            lines = "".join([*self._pending, text[:cut]])
            self._pending = [text[cut:]] if cut < len(text) else []
            self._stream.write(self._inert(redact(lines, self._extra)))
        return len(text)

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)

    def _write_pending(self) -> None:
        with self._lock:
            rest, self._pending = "".join(self._pending), []  # dropped even if the write fails
            if rest:
                self._stream.write(self._inert(redact(rest, self._extra)))

    def flush(self) -> None:
        if self._closed:
            return
        self._write_pending()
        self._stream.flush()

    def close(self) -> None:
        if not self._closed:
            self.flush()
            self._closed = True

    @property
    def closed(self) -> bool:
        return self._closed or bool(getattr(self._stream, "closed", False))

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return self._stream.isatty()

    def fileno(self) -> int:
        return self._stream.fileno()

    def __enter__(self) -> RedactingStream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __getattr__(self, name: str) -> Any:
        # only called for names not found above; `_stream` guards copy/pickle before __init__
        if name in ("buffer", "_stream"):
            raise AttributeError(name)
        return getattr(self._stream, name)


def redacted_json(document: Any, **options: Any) -> str:
    """JSON of document with every string redacted *before* serialising: json.dumps escapes
    non-ASCII text (`\\u00e4`), quotes and backslashes, and a secret escaped that way no longer
    matches the redactor on the serialised text. Values that are not JSON become their str()."""
    import json

    def walk(value: Any) -> Any:
        if isinstance(value, str):
            return redact(value)
        if isinstance(value, dict):
            return {walk(str(k)): walk(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [walk(v) for v in value]
        if value is None or isinstance(value, (bool, int, float)):
            return value
        return redact(str(value))

    return json.dumps(walk(document), **options)
