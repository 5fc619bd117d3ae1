"""Hard caps on the work one input can make depsync do.

`depsync check` runs on repository content anyone can put in a PR, so every loop whose
length an input controls has a cap here. Each cap sits far above what real repositories
need (the numbers below say how far) and has a stated fallback where it is enforced:
a Dockerfile value past an expansion cap is *unresolved* (reported as
`docker-unresolved`, never guessed); a marker past a marker cap is refused (exit 2 with
one line), never compared some other way.
"""

from __future__ import annotations

import re

from depsync.errors import DepsyncError

# Any single file depsync reads (pyproject.toml, uv.lock, a Dockerfile). Real uv.lock
# files reach a few MB (Megatron-LM's is 1.5 MB); 64 MiB leaves a wide margin while
# keeping a file of garbage from being parsed at all.
MAX_INPUT_BYTES = 64 * 1024 * 1024

# A Dockerfile, before BuildKit's parser sees it: that parser is superlinear on heredocs
# (measured: 128 KiB of heredoc ~0.7 s, 256 KiB ~2 s, 860 KiB ~13 s). Real CI Dockerfiles
# are a few KiB (Megatron-LM's: 2 KiB); the largest public ones stay under 64 KiB.
MAX_DOCKERFILE_BYTES = 256 * 1024

# The raw text of a discovered Dockerfile that was not parsed (past MAX_DOCKERFILE_BYTES, or
# BuildKit's parser rejects it), read for the uv commands it shows (rule docker-unparsed):
# linear, ~0.3 s per MiB of hostile text measured on the 2-core VM. Past this many characters
# the rest is not read: a uv command only there is no finding (`check -v` still lists the file).
MAX_TEXT_SCAN_CHARS = 1024 * 1024

# One expanded Dockerfile value (an ARG/ENV value, a word of a RUN command). Real values
# are image names, versions, paths: well under 1 KiB. Doubling ARGs (`A1=${A0}${A0}`)
# reach 8 MiB in 23 lines; past this cap the value is unresolved.
MAX_EXPANSION_BYTES = 64 * 1024

# All substituted bytes of one Dockerfile together. Without it, a 1 MB file of words that
# each expand to MAX_EXPANSION_BYTES would hold gigabytes. Real files substitute a few KiB.
MAX_EXPANSION_TOTAL_BYTES = 4 * 1024 * 1024

# Variable substitutions (`$A`, `${A:-x}`, ...) in one Dockerfile. Real files make tens.
MAX_EXPANSION_STEPS = 20_000

# Nesting of `${A:-${B:-...}}` forms. Real files nest one or two levels; past this the
# reference is unresolved (and recursion depth stays small).
MAX_EXPANSION_DEPTH = 8

# Nesting of `${` in a Dockerfile's raw text, checked before BuildKit's parser sees it: that
# parser is cubic in the nesting depth of a RUN line (measured on the 2-core VM: depth 500
# 1.3 s, 1000 7.9 s, 2000 92 s, in 19 KB; 256 KiB of depth-16 forms 0.3 s, of depth 64 2.2 s).
# Real files nest one or two levels.
MAX_PARSE_NESTING = 16

# Markers (model/markers.py) are compared as decision diagrams, exactly; what is bounded is
# the input. Measured on the real locks of tests/corpus and ../shared/corpus-ml (14.8k
# markers): the longest is 8.9k characters with 242 comparisons, nested 3 deep.
MAX_MARKER_CHARS = 64 * 1024
MAX_MARKER_TERMS = 2048
MAX_MARKER_NESTING = 64

# Nodes one marker operation (reading a marker, one comparison) may add to the diagrams: a
# diagram can be exponential in its variables (`(extra == 'a1' and extra == 'b1') or ...`),
# and uv builds the same one. ~12 us a node on the 2-core VM: a refused marker costs ~1 s.
# Measured: the 1112 distinct markers of the real locks of both corpora build 13k nodes in all.
MAX_MARKER_NODES = 100_000

# Nodes all marker operations of one freshness check may add together (markers.bounded_check):
# without it, many markers each under MAX_MARKER_NODES would cost a second each. Measured: the
# largest check of both corpora adds 134 nodes, the Megatron-LM triple 15.
MAX_MARKER_CHECK_NODES = 200_000

# All nodes kept between operations (memory); past it the store starts afresh.
MAX_MARKER_STORE = 500_000


# What `check --image` keeps of one image's Python environment (core/model/image_env.py). The image
# is anyone's, and its python (or a program in its place) prints what it likes. An NGC PyTorch
# image ships ~300 distributions, torch lists ~30 Requires-Dist, real METADATA headers are a few
# KiB; past a cap the rest is counted in a note, never kept.
MAX_IMAGE_DISTRIBUTIONS = 20_000
MAX_IMAGE_REQUIRES = 1_000  # Requires-Dist entries kept per distribution
MAX_IMAGE_FIELD = 512  # characters of one name, version or path
MAX_IMAGE_REQUIREMENT = 4_096  # characters of one Requires-Dist entry
MAX_IMAGE_METADATA_BYTES = 256 * 1024  # read of one METADATA file (its headers come first)
MAX_IMAGE_OUTPUT_BYTES = 32 * 1024 * 1024  # of the reader's output (a real NGC image: ~200 KiB)


class LimitExceeded(DepsyncError):
    """An input refused by one of these caps (not by its own syntax): `check` tells the two apart
    for a discovered Dockerfile it could not check (rule docker-unparsed)."""


def check_size(data_len: int, where: str, limit: int = MAX_INPUT_BYTES, what: str = "file") -> None:
    """Refuse an input of data_len bytes over limit, before anything parses it."""
    if data_len > limit:
        raise LimitExceeded(f"the {what} is {data_len} bytes; depsync reads at most {limit} bytes per {what}", where)


_NESTING_TOKENS = re.compile(r"\$\{|\}|\\?\r?\n")


def check_nesting(text: str, where: str, limit: int = MAX_PARSE_NESTING) -> None:
    """Refuse a Dockerfile whose `${` forms nest deeper than limit on one logical line (a line
    ending in a backslash continues it), in one linear scan before anything parses it."""
    if "${" not in text:
        return
    depth = 0
    line = 1
    for token in _NESTING_TOKENS.finditer(text):
        found = token.group()
        if found == "${":
            depth += 1
            if depth > limit:
                raise LimitExceeded(f"the Dockerfile nests `${{...}}` more than {limit} deep on one line; depsync reads at most {limit} levels (real files use one or two)", f"{where}:{line}")
        elif found == "}":
            depth = max(depth - 1, 0)
        else:
            line += 1
            if not found.startswith("\\"):
                depth = 0
