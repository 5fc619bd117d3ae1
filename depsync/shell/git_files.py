"""Shell: what git would answer, read from the files of a plain `.git` directory, where that
answer is certain; otherwise "ask git".

A check in a repository asks git two things that are often answered by files alone: is this
a repository, and does the owner ref exist (in most clones CI makes it does not). Starting
git for them (rev-parse, cat-file, and importing subprocess) was most of what a cold check
in a checkout cost more than one outside it. Only the layouts read here are answered: a
`.git` directory found upwards (no worktree or submodule `.git` file, no reftable, nothing
in the environment sending git elsewhere), owned by this user, whose config names no
extension, no work tree and no include. Anything else returns None, and git decides.
"""

from __future__ import annotations

import os

# what git reads to resolve a name (its DWIM rules), each a loose ref file or a packed-refs line
REF_RULES = ("{}", "refs/{}", "refs/tags/{}", "refs/heads/{}", "refs/remotes/{}", "refs/remotes/{}/HEAD")
# anything that sends git elsewhere than the `.git` directory found upwards: git is asked then
GIT_PLACES = (
    "GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_CEILING_DIRECTORIES", "GIT_DISCOVERY_ACROSS_FILESYSTEM",
    "GIT_NAMESPACE", "GIT_OBJECT_DIRECTORY", "GIT_REF_PARANOIA", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT",
)
# a name git can only read as a ref (or as nothing): no revision syntax, no abbreviated object id
_REF_CHARACTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-/")
_HEX_CHARACTERS = frozenset("0123456789abcdefABCDEF")
_MAX_PACKED_REFS = 8 << 20  # larger: git reads it faster than this module would
_MAX_CONFIG = 64 << 10


def has_git_dir(root: str) -> bool:
    """Is there a `.git` in root or above it? Without one (and without GIT_DIR) git finds no
    repository, so the answer needs no git process (git.is_repository asks this too)."""
    if os.environ.get("GIT_DIR"):
        return True
    folder = os.path.abspath(root)
    while True:
        if os.path.lexists(os.path.join(folder, ".git")):
            return True
        parent = os.path.dirname(folder)
        if parent == folder:
            return False
        folder = parent


def plain_git_dir(root: str) -> tuple[str, str] | None:
    """(the work tree's top, its `.git` directory) when git finds a plain `.git` directory at
    root or above, with loose and packed refs; ("", "") when it finds none; None when it is
    another layout (a worktree's or submodule's `.git` file, reftable, the environment's choice):
    only git can say then."""
    if any(os.environ.get(name) for name in GIT_PLACES):
        return None
    folder = os.path.realpath(root)  # git starts from the real working directory
    while True:
        dot_git = os.path.join(folder, ".git")
        if os.path.lexists(dot_git):
            if os.path.islink(dot_git) or not os.path.isdir(dot_git) or os.path.lexists(os.path.join(dot_git, "reftable")):
                return None
            return folder, dot_git
        if os.path.isfile(os.path.join(folder, "HEAD")) and os.path.isdir(os.path.join(folder, "refs")):
            return None  # a bare repository (or a git dir itself): git's discovery stops here
        parent = os.path.dirname(folder)
        if parent == folder:
            return "", ""
        folder = parent


def ref_file(path: str) -> bytes | None:
    """A loose ref's bytes (a commit id, or `ref: <name>`); None when there is none."""
    try:
        with open(path, "rb") as handle:
            return handle.read(4096)  # a ref is 41 bytes; git itself reads no more than this of one
    except (OSError, ValueError):  # absent, a directory (refs/heads/a when a/b exists), a NUL in the name
        return None


def _is_hex(text: str) -> bool:
    return bool(text) and set(text) <= _HEX_CHARACTERS


def _read_bounded(path: str, limit: int) -> bytes | None:
    """The file's bytes; b"" when it is absent; None when it is larger than limit or unreadable."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(limit + 1)
    except FileNotFoundError:
        return b""
    except OSError:
        return None
    return data if len(data) <= limit else None


def _plain_config(config: bytes) -> bool:
    """Does this `.git/config` leave git where this module looks? No extension (a v1 format
    git may refuse, or another ref store), no core.worktree, no include (which could set
    either), a bare repository not declared, a format version git reads."""
    text = config.decode("utf-8", errors="replace").lower()
    if "extensions" in text or "worktree" in text or "include" in text or "refstorage" in text:
        return False
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        key, value = key.strip(), value.split("#")[0].split(";")[0].strip()
        if not sep:
            continue
        if key == "bare" and value not in ("false", "no", "off", "0"):
            return False
        if key == "repositoryformatversion" and value not in ("0", "1"):
            return False
    return True


def _git_on_path() -> bool:
    for folder in os.environ.get("PATH", os.defpath).split(os.pathsep):
        candidate = os.path.join(folder or ".", "git")
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return True
    return False


def _plain_repository(root: str) -> str | None:
    """The `.git` directory of a repository git would open at root with no surprise, as this
    module reads it; None: ask git."""
    found = plain_git_dir(root)
    if found is None or not found[0]:
        return None
    top, git_dir = found
    try:
        owner = os.stat(git_dir).st_uid
        if owner != os.geteuid() or os.stat(top).st_uid != owner:  # safe.directory: git decides
            return None
    except OSError:
        return None
    head = ref_file(os.path.join(git_dir, "HEAD"))
    if head is None or not (head.startswith(b"ref: refs/") or _is_hex(head.strip().decode(errors="replace"))):
        return None  # git reads HEAD to call this a repository
    if not (os.path.isdir(os.path.join(git_dir, "objects")) and os.path.isdir(os.path.join(git_dir, "refs"))):
        return None
    if os.path.lexists(os.path.join(git_dir, "commondir")):
        return None
    config = _read_bounded(os.path.join(git_dir, "config"), _MAX_CONFIG)
    if config is None or not _plain_config(config) or not _git_on_path():
        return None
    return git_dir


def is_repository(root: str) -> bool | None:
    """True when git would open a repository at root, as the files say; None: ask git."""
    return True if _plain_repository(root) is not None else None


def ref_absent(root: str, ref: str) -> bool:
    """True only when git would certainly not resolve ref at root: a plain ref name (no revision
    syntax, not an abbreviated object id) that none of git's DWIM rules finds, loose or packed.
    False says only "ask git"."""
    if not ref or not set(ref) <= _REF_CHARACTERS or ref[0] in "-./" or _is_hex(ref):
        return False
    if ".." in ref or "//" in ref or "/." in ref or ref.endswith((".lock", "/", ".")):
        return False
    if ref.rstrip("0123456789abcdefABCDEF").endswith("-g"):
        return False  # `git describe` output: git reads the hex after `-g` as an object id
    git_dir = _plain_repository(root)
    if git_dir is None:
        return False
    names = [rule.format(ref) for rule in REF_RULES]
    if any(os.path.lexists(os.path.join(git_dir, name)) for name in names):
        return False
    packed = _read_bounded(os.path.join(git_dir, "packed-refs"), _MAX_PACKED_REFS)
    if packed is None or not _well_formed_packed_refs(packed):
        return False  # git stops on a malformed packed-refs: its error, not "not found"
    packed = b"\n" + packed
    return not any(b" " + name.encode() + b"\n" in packed for name in names if name.startswith("refs/"))


def _well_formed_packed_refs(packed: bytes) -> bool:
    """Does every line read as git reads packed-refs (a header, `<id> <ref>`, `^<peeled id>`),
    the last one ended? git refuses the file otherwise."""
    if not packed:
        return True
    if not packed.endswith(b"\n"):
        return False
    for number, line in enumerate(packed[:-1].split(b"\n")):
        if line.startswith(b"# pack-refs with:") and number == 0:
            continue
        text = line.decode("ascii", errors="replace")
        object_id, space, name = text[1:].partition(" ") if text.startswith("^") else text.partition(" ")
        if len(object_id) not in (40, 64) or not _is_hex(object_id) or bool(space) == text.startswith("^"):
            return False
        if space and not name.startswith("refs/"):
            return False
    return True
