"""The documentation of each rule: what `depsync rule ID` prints and SARIF's rule help.

Data only, imported by `depsync rule` and the SARIF renderer, never by a plain check (it
stays off the start-up path). The one-line summary, the default severity and whether
`check --fix` fixes a rule live in RULES (depsync/rules/__init__.py); README's rule table
is generated from RULES, and tests/test_rule_docs.py checks that every rule has a page here.
"""

from __future__ import annotations

from depsync.core import limits
from depsync.core.rules.registry import Rule
from depsync.records import record


@record
class RuleDoc:
    why: str  # what goes wrong when it is ignored
    example: str  # what triggers it (a few lines of the file it is about)
    fix: str  # what to do; for fixable rules, what `check --fix` does


DOCS: dict[str, RuleDoc] = {
    "docker-unknown-extra": RuleDoc(
        why="uv refuses an extra the project does not define, so the image build fails at the `uv sync` step. "
        "The usual cause is a Dockerfile taken from main next to dev's pyproject.toml (main's `--extra te` where dev has `dev`). "
        "uv has no `-E` short option either: `-E x` fails with \"unexpected argument '-E' found\".",
        example="# pyproject.toml defines the extras dev and mlm\nRUN uv sync --locked --extra te --extra mlm",
        fix="Remove the flag, or define the extra in `[project.optional-dependencies]` and relock (`depsync lock`). "
        "ARG defaults are applied first (`--extra ${IMAGE_TYPE}` with `ARG IMAGE_TYPE=dev` is `--extra dev`).",
    ),
    "docker-unknown-group": RuleDoc(
        why="uv fails when `--group`, `--only-group`, `--no-group` or `UV_NO_GROUP` names a dependency group pyproject.toml does not "
        "define, so the image build fails.",
        example="# pyproject.toml has [dependency-groups] build and no_pypi_wheels\nRUN uv sync --locked --only-group build-tools",
        fix="Remove the flag, or add the group to `[dependency-groups]` and relock.",
    ),
    "docker-not-locked": RuleDoc(
        why="Without `--locked` (fail when the lock is stale) or `--frozen` (install the lock as it is), `uv sync` re-resolves a stale "
        "lock at build time and installs whatever resolves that day: the image no longer matches uv.lock, and the failure the lock "
        "should have caught in review shows up later, or never. It is a warning when another `uv sync` in the same file is locked.",
        example="RUN uv sync --extra dev",
        fix="Add `--locked` (or `--frozen`), or set `ENV UV_LOCKED=1` before the command.",
    ),
    "docker-stale-no-install": RuleDoc(
        why="A `--no-install-package` that names a package the lock does not contain does nothing. It usually means the lock moved on "
        "(the package is gone from the dependency tree, as torchvision from a lock without it). When the lock has the package as "
        "another build (`-cu12` -> `-cu13`), that is `docker-no-install-renamed`, an error.",
        example="RUN uv sync --locked \\\n        --no-install-package torch \\\n        --no-install-package torchvision   # the lock has no torchvision",
        fix="`depsync check --fix` removes the stale flags from the exact lines, keeping the rest of each line and the `\\` "
        "continuations intact, and names each one it removed. A flag whose package the lock has as another build is "
        "`docker-no-install-renamed` instead (renamed, never deleted).",
    ),
    "docker-no-install-renamed": RuleDoc(
        why="A `--no-install-package` keeps a package out of the image, usually because the base image ships its own build "
        "(CUDA libraries, torch). When the lock moves to another build of that package (`nvidia-cudnn-cu12` -> `nvidia-cudnn-cu13`, "
        "or `nvidia-cublas-cu12` -> `nvidia-cublas`), the flag names nothing and the new build is installed over the base image's "
        "libraries: the image changes, so this is an error. Deleting the flag turns the check green and keeps that change. "
        "depsync calls two names builds of one package when they differ only by a version-like segment (`cu12`/`cu13`, a segment "
        "with digits present in one name only); a name pyproject.toml asks for itself is never offered.",
        example="RUN uv sync --locked \\\n        --no-install-package nvidia-cudnn-cu12   # the lock has nvidia-cudnn-cu13",
        fix="`depsync check --fix` writes the lock's name in the flag when the lock has exactly one other build. With several "
        "(a stale `nvidia-nccl-cu12` and a lock with both `nvidia-nccl-cu11` and `nvidia-nccl-cu13`), it leaves the flag and says so: write the one the image must not install.",
    ),
    "docker-unresolved": RuleDoc(
        why="A flag value that uses a variable with no default, a build argument nobody passes, or a command substitution is only known "
        "when the image builds. depsync does not guess, so the extras, groups and packages it stands for were not checked. "
        "A value read from a BuildKit secret (`RUN --mount=type=secret,env=TOKEN`, `$(cat /run/secrets/x)`) is not reported: "
        "it is known only to the build by design, and passing it as a build arg would put it in the image's history. As the "
        "value of a flag depsync checks (`--extra $TOKEN`) it is an `info` finding.",
        example="ARG IMAGE_TYPE\nRUN uv sync --locked --extra ${IMAGE_TYPE}",
        fix="Give the variable an ARG/ENV default, or pass it in `[tool.depsync] dockerfiles = [{ path = ..., build-args = { IMAGE_TYPE = \"dev\" } }]` "
        "(or `depsync check --dockerfile PATH --build-arg NAME=VALUE`).",
    ),
    "docker-unparsed": RuleDoc(
        why="Without `[tool.depsync] dockerfiles`, `check` finds the project's Dockerfiles that run uv on it. One that does not parse "
        "(BuildKit's parser rejects it: an unterminated heredoc, `ENV` without a value) or that is past depsync's bounds "
        f"(over {limits.MAX_DOCKERFILE_BYTES // 1024} KiB, `${{...}}` nested over {limits.MAX_PARSE_NESTING} deep on one line) "
        "cannot be checked. When its text still shows a RUN with `uv sync`, `uv lock`, `uv export`, `uv run` or a `uv pip install` "
        "of the project, the image it builds is not vouched for, and the check says so instead of passing. The finding names the "
        "line the error names; for an unterminated heredoc, the instruction that opens it; otherwise the first uv command. "
        f"Past the size bound, the first {limits.MAX_TEXT_SCAN_CHARS:,} characters are read for uv commands. A file "
        "whose text shows no such command is only listed by `check -v`; a configured Dockerfile that does not parse stops the "
        "check (exit 2). It is an error: the gate fails, and `depsync lock` refuses to relock (it cannot read the uv version the "
        "file pins). A search for Dockerfiles that stopped at its bound of directory entries is the same rule as a warning.",
        example='RUN --mount=type=cache,target=/root/.cache/uv \\\n    bash -ex <<"EOF"\n    uv sync --locked\n# no line `EOF` follows: the heredoc never ends',
        fix="Fix the syntax (`docker build` fails on it too), or list the Dockerfiles to check in `[tool.depsync] dockerfiles`. "
        "Past a bound, simplify or split the file: the bounds are fixed (they keep a hostile file from stalling the check).",
    ),
    "members-not-checked-out": RuleDoc(
        why="A workspace whose members live in git submodules needs them checked out: `actions/checkout` and a plain `git clone` "
        "leave each submodule an empty directory. uv cannot use the lock then (it would drop the members and re-resolve), and what the "
        "lock records for them cannot be compared, but the lock is not stale: relocking is not the fix. One finding says so, with the "
        "count and the first few paths (the JSON output lists all of them under `items`); the rules that read members say they "
        "cannot judge them instead of reporting what they define as unknown. `check --ref` reads a member through the submodule's "
        "own checkout at the commit the ref records, so it gives the same verdict as `check` on the work tree. `check --deep` does not "
        "run uv then (uv fails on the missing members for that reason alone) and says so on stderr.",
        example="# .gitmodules: [submodule \"packages/member-lib\"] path = packages/member-lib\n"
        "# uv.lock: [manifest] members = [\"member-lib\", \"root-app\"]\n# packages/member-lib/: empty (not checked out)",
        fix="`git submodule update --init` (in GitHub Actions: `actions/checkout` with `submodules: true`), then check again.",
    ),
    "lock-stale": RuleDoc(
        why="uv.lock records the inputs it was made from (requirements with their sources and markers, extras, groups, the manifest). "
        "When pyproject.toml asks for something else, `uv sync --locked` in the image fails and `uv lock --check` fails. "
        "depsync predicts that verdict offline, without uv; `check --deep` asks real uv too.",
        example="# pyproject.toml: dependencies = [\"alpha>=2\"]\n# uv.lock, [package.metadata]: requires-dist = [{ name = \"alpha\", specifier = \">=1\" }]",
        fix="Run `depsync lock` (uv lock inside the CI image, with the uv version the Dockerfile pins) and commit uv.lock. Never edit uv.lock by hand.",
    ),
    "workspace-member-outside": RuleDoc(
        why="uv follows `[tool.uv.workspace] members` wherever they lead: through a symlink, or to `../`. depsync reads nothing outside "
        "the project (a work tree's link could point anywhere), so it cannot tell whether the lock records such a member as uv would: "
        "rather than a silent pass, this error. A member inside the project is always read, also under `venv/`, `node_modules/` or "
        "`.tox/` and behind a link that stays inside.",
        example='[tool.uv.workspace]\nmembers = ["packages/*"]\n# packages/tool -> /home/me/src/tool (a symlink out of the checkout)',
        fix="Move the member into the project, point the link inside it, or list it in `[tool.uv.workspace] exclude`.",
    ),
    "static-model-disagrees": RuleDoc(
        why="`check` confirms a static `lock-stale` verdict with a real uv before reporting it as an error (a false red check in PR CI "
        "costs more than a late one). When `uv lock --check --offline` accepts the lock, uv's word wins: the finding shows both answers "
        "and the check passes. It means depsync's model of uv missed a shape of pyproject.toml uv handles; a report helps fix that.",
        example="# depsync: \"the lock records `torch>=2.7; sys_platform != 'linux'`, which pyproject no longer asks for\"\n"
        "# uv 0.13.9: `uv lock --check --offline` exits 0",
        fix="Nothing to change in the lock. Report the disagreement with the pyproject.toml and uv.lock (and the uv version) so depsync's "
        "model can follow uv; `depsync check --static` shows the static verdict alone.",
    ),
    "metadata-rev-mismatch": RuleDoc(
        why="`[[tool.uv.dependency-metadata]]` gives uv static metadata for packages it cannot build while resolving. When the version's "
        "local segment is the short sha of the git pin (`2.14.0+f031cf87`) and the pin moves without it, uv installs the new code under "
        "the old version: in Megatron-LM this lived from minutes to two weeks before anyone noticed.",
        example='[tool.uv.sources]\ntransformer-engine = { git = "https://github.com/NVIDIA/TransformerEngine.git", rev = "4329ff84..." }\n\n'
        '[[tool.uv.dependency-metadata]]\nname = "transformer-engine"\nversion = "2.14.0+f031cf87"',
        fix="`depsync check --fix` sets the local segment from the pin (same length; for a branch or tag pin, the commit the lock "
        "resolved). pyproject.toml changes, so relock afterwards with `depsync lock`.",
    ),
    "uv-version-mismatch": RuleDoc(
        why="The image installs with the uv version the Dockerfile pins (`ARG UV_VERSION`, `pip install uv==`, "
        "`COPY --from=ghcr.io/astral-sh/uv:X`). When `[tool.uv] required-version` excludes it, uv refuses to run in the image. "
        "A pin that is not a release number (`0.7.2`) is reported here too: it would name a download and a cache directory.",
        example='# Dockerfile\nARG UV_VERSION=0.7.2\n# pyproject.toml\n[tool.uv]\nrequired-version = ">=0.8"',
        fix="Change the pin or `required-version` so they agree.",
    ),
    "uv-version-inconsistent": RuleDoc(
        why="Images that install from one lock with different uv versions can disagree about it (format revisions, resolution fixes), "
        "and `depsync lock` can only relock with one of them.",
        example="# docker/Dockerfile.ci.dev: ARG UV_VERSION=0.7.2\n# docker/Dockerfile.ci.lts: ARG UV_VERSION=0.6.0",
        fix="Pin one uv version in every image that installs from this lock.",
    ),
    "uv-lock-format": RuleDoc(
        why="uv writes a format version at the top of uv.lock. A uv older than that format cannot read the lock, so the image's "
        "`uv sync` fails (a lock made with a newer host uv, say).",
        example="# uv.lock: version = 1\n# Dockerfile: ARG UV_VERSION=0.2.30",
        fix="Pin a uv that reads the format in the image, or relock with the pinned uv (`depsync lock` does that).",
    ),
    "uv-lock-newer-than-pin": RuleDoc(
        why="uv records a format `revision` at the top of uv.lock and writes its own revision whenever it writes the lock. A "
        "revision higher than the image's uv writes means the lock was made with a newer uv (on a laptop, by a bot). The image "
        "still reads it, but relocking there, which the project's own instructions ask for, downgrades the lock (Megatron-LM's "
        "dev lock: revision 3 -> 2 with uv 0.7.2) and rewrites about 180 marker lines: every relock is a large diff, and a "
        "resolution the pinned uv cannot reproduce goes unnoticed until someone relocks (`check --deep` runs the pinned uv). "
        "The revision each uv writes was measured on real releases (0.7.2, 0.7.22, 0.8.0: 2; 0.9.0, 0.11.0: 3; 0.13.9: 5); "
        "a pin between two of them is held to the later one's revision, so this never fires on a lock the pin could write.",
        example="# uv.lock: version = 1, revision = 3\n# docker/Dockerfile.ci.dev: ARG UV_VERSION=0.7.2",
        fix="Pin the uv that made the lock in the image (`ARG UV_VERSION`), or relock with the pinned uv (`depsync lock`) and "
        "commit that lock.",
    ),
    "conflict-markers": RuleDoc(
        why="A merge left `<<<<<<<`/`=======`/`>>>>>>>` lines in uv.lock or pyproject.toml. Neither file parses, so every install fails. "
        "Lockfiles must never be merged as text.",
        example="<<<<<<< HEAD\nrev = \"f031cf87...\"\n=======\nrev = \"4329ff84...\"\n>>>>>>> origin/main",
        fix="`depsync reconcile` restores dev's triple and merges the sources three-way; or resolve pyproject.toml and relock with "
        "`depsync lock`. `depsync install` registers merge drivers so this does not happen again.",
    ),
    "lock-artifact-mismatch": RuleDoc(
        why="A wheel or sdist file name in uv.lock names another package or version than its `[[package]]`: the sign of a hand edit or "
        "a text merge. uv would install different files than the version says.",
        example='[[package]]\nname = "alpha"\nversion = "2.0"\nwheels = [{ url = ".../alpha-1.1-py3-none-any.whl", hash = "sha256:..." }]',
        fix="Do not edit uv.lock by hand: restore it (`git checkout`) and run `depsync lock`.",
    ),
    "lock-git-unresolved": RuleDoc(
        why="uv records every git source with the full commit it resolved after `#`. Without it the install is not reproducible, and "
        "uv does not write such a lock: it was edited by hand or merged as text.",
        example='source = { git = "https://github.com/NVIDIA/TransformerEngine.git?rev=main" }',
        fix="Do not edit uv.lock by hand: restore it (`git checkout`) and run `depsync lock`.",
    ),
    "lock-dangling-dependency": RuleDoc(
        why="A package depends on a name (or name and version) that no `[[package]]` of the lock provides. uv cannot install such a "
        "lock; it comes from a hand edit or a text merge that dropped an entry.",
        example='[[package]]\nname = "beta"\ndependencies = [{ name = "gamma" }]\n# no [[package]] named gamma',
        fix="Do not edit uv.lock by hand: restore it (`git checkout`) and run `depsync lock`.",
    ),
    "lock-duplicate-package": RuleDoc(
        why="The same name, version and source appear twice: uv never writes that (forked resolutions differ in version or source). "
        "It is what a text merge of two locks leaves behind.",
        example='[[package]]\nname = "alpha"\nversion = "1.1"\n...\n[[package]]\nname = "alpha"\nversion = "1.1"',
        fix="Do not edit uv.lock by hand: restore it (`git checkout`) and run `depsync lock`.",
    ),
    "lock-bad-hash": RuleDoc(
        why="An artifact hash is not `sha256:` (or sha384, sha512, md5) followed by the right number of hex digits, so uv cannot verify "
        "the download. A hand edit or a broken merge.",
        example='wheels = [{ url = "...", hash = "sha256:abc" }]',
        fix="Do not edit uv.lock by hand: restore it (`git checkout`) and run `depsync lock`.",
    ),
    "protected-path-changed": RuleDoc(
        why="Protected paths (default `.github/CODEOWNERS`, `[tool.depsync] protected-paths`) belong to the owner branch (default "
        "`origin/dev`). A sync that takes main's copy silently changes who reviews what.",
        example="# .github/CODEOWNERS differs from origin/dev's",
        fix="`git checkout origin/dev -- .github/CODEOWNERS` (the finding names the ref and the path).",
    ),
    "protected-unchecked": RuleDoc(
        why="The owner ref (default `origin/dev`) does not exist in this clone, so the protected paths could not be compared. An `info` finding, "
        "not a failure; naming the ref explicitly (`--owner-ref`, `[tool.depsync] owner-ref`) makes a missing ref an error instead.",
        example="# a shallow CI checkout without origin/dev",
        fix="Fetch the owner ref (`git fetch origin dev`, or `fetch-depth: 0` in actions/checkout).",
    ),
    "source-pin-not-commit": RuleDoc(
        why="A git source pinned to a branch or tag (`rev = \"nv_dev\"`, `tag = \"v0.3.0\"`, or no rev at all) can move. The lock "
        "records the commit it resolved, but the next relock may silently pick another one. A short commit (`rev = \"abc1234\"`, a hex "
        "prefix) does not move but is not the commit either: the finding names the full commit the lock resolved. The same policy "
        "covers direct git URLs in dependencies, extras and groups (`name @ git+https://github.com/org/name.git@main`), and the "
        "`[tool.uv.sources]` and requirements of every workspace member as well as the root's (a finding names the member's "
        "pyproject.toml).",
        example='[tool.uv.sources]\nemerging_optimizers = { git = "https://github.com/NVIDIA-NeMo/Emerging-Optimizers.git", rev = "v0.3.0" }',
        fix="`depsync check --fix` pins `rev` to the full commit the lock resolved (the finding names it), dropping `tag`/`branch`. "
        "pyproject.toml changes, so relock afterwards with `depsync lock` (uv resolves the same commit). "
        "A direct git URL requirement is not rewritten: put the commit the finding names after `@` by hand. "
        "`[tool.depsync] severity = { source-pin-not-commit = \"error\" }` makes it fail CI.",
    ),
    "source-host-not-allowed": RuleDoc(
        why="With `[tool.depsync] allowed-hosts`, git and url sources may only come from those hosts: a supply-chain guard against a "
        "source that a merged PR pointed at a fork or a lookalike host. Workspace members' own sources are held to it too.",
        example='# allowed-hosts = ["github.com"]\nfoo = { git = "https://gitlab.example/fork/foo.git", rev = "..." }',
        fix="Use an allowed host, or add this one to `allowed-hosts` after review.",
    ),
    "source-inert": RuleDoc(
        why="uv ignores a `[tool.uv.sources]` entry for a package that no dependency, extra or group asks for: the lock does not change. "
        "Usually a sync brought main's source for a package dev does not use; it becomes live the day someone adds the dependency. "
        "A workspace member's own `[tool.uv.sources]` apply to that member's requirements: an entry none of them asks for is inert too.",
        example='[tool.uv.sources]\ndeep_gemm = { git = "https://github.com/deepseek-ai/DeepGEMM.git", rev = "..." }\n# nothing depends on deep_gemm',
        fix="Remove the entry, or add the package to the extra or group that needs it.",
    ),
    "merge-inconsistent": RuleDoc(
        why="Entries decided apart during a sync can contradict each other even when each decision is right: dev's source naming an "
        "index main removed, main's `==` pin next to dev's wheel URL of another version, a default group main renamed. uv cannot lock "
        "such a file, so the relock fails, every night, on reconcile's own plan. Only `depsync reconcile` reports it, and only what the "
        "merge introduced (dev's own file is checked by the other rules).",
        example='# dev kept: vllm = { index = "vllm-cu129" }\n# main removed: [[tool.uv.index]] name = "vllm-cu129"',
        fix="Take the coupled entries from one side (both dev's or both main's), as the finding says, then relock.",
    ),
    "uv-lock-check": RuleDoc(
        why="`depsync check --deep` runs real `uv lock --check --offline` with the uv version the Dockerfile pins; this is what uv says "
        "when the lock is not fresh (including what depsync's static comparison cannot see, such as `dynamic` dependencies).",
        example="depsync check --deep",
        fix="Run `depsync lock` and commit uv.lock.",
    ),
    "image-kept-out-missing": RuleDoc(
        why="`--no-install-package torch` in the CI Dockerfile keeps the lock's torch out of `uv sync` because the base image is "
        "meant to ship its own build. When the image does not ship it (another base image, a slimmer tag, a package the image "
        "dropped), nothing installs it: the image builds, and the first import fails at run time. Reported only with "
        "`depsync check --image`, which reads the image's installed distributions (its own python, no network, read-only). "
        "A CUDA library wheel (`nvidia-cublas`, `nvidia-nccl-cu13`, ...) counts as shipped when the image has CUDA (NGC images "
        "install it as system libraries, not as wheels); of another CUDA major, that is `image-cuda-mismatch`.",
        example="FROM nvcr.io/nvidia/pytorch:25.09-py3\nRUN uv sync --locked --no-install-package nvidia-nccl-cu13   # the image has no nvidia-nccl-cu13",
        fix="Remove the flag so uv installs the lock's build, or build FROM an image that ships the package. "
        "The finding names the image, its id and how many distributions were read.",
    ),
    "image-version-mismatch": RuleDoc(
        why="A kept-out package is the image's, not the lock's: every other locked package was resolved against the lock's version "
        "of it. When the image's version does not satisfy a requirement the lock records (the project's own `torch>=2.9`, a "
        "`[[tool.uv.dependency-metadata]]` entry), or is another release than the locked one (the lock pins torch 2.9.1, the image "
        "ships 2.8.0a0+nv25.06), the installed set was never resolved together. How close counts is `[tool.depsync] "
        "image-version-policy`: `release` (default: the same release numbers; pre-release and local segments such as `a0+nv25.06` "
        "ignored), `exact`, `public` (local segment ignored), `minor`, `major` or `off`. uv.lock records version specifiers only "
        "for the project's own requirements and dependency-metadata; for the other packages the locked version stands for them.",
        example="# uv.lock: torch 2.9.1; the image: torch-2.8.0a0+nv25.06.dist-info\nRUN uv sync --locked --no-install-package torch",
        fix="Constrain the package in pyproject.toml to the image's release (`torch==2.8.*`) and relock, so the lock is resolved "
        "against what the image ships; or build FROM an image with the locked version.",
    ),
    "image-shadowed": RuleDoc(
        why="`uv sync` into an environment that sees the image's packages (a venv with `--system-site-packages`, or the system "
        "environment) installs the lock's version of a package the image already ships at another version; the lock's copy wins "
        "on the path. That is sometimes the point (a newer pin), and sometimes a CUDA build of the image replaced by a PyPI wheel. "
        "The finding names the `--no-install-package` flag that would keep the image's. The same version in both is not reported.",
        example="# the image ships numpy 1.26.4, uv.lock has numpy 2.4.4\nRUN uv sync --locked --extra dev",
        fix="Add `--no-install-package NAME` to keep the image's build (its version is then held against the lock by "
        "`image-version-mismatch`), or let uv replace it on purpose and suppress the finding with `# depsync: ignore[image-shadowed]`.",
    ),
    "image-python-mismatch": RuleDoc(
        why="`uv sync` refuses an interpreter outside `requires-python`, and a lock whose every resolution fork (its "
        "`resolution-markers`, or the `supported-markers` of `[tool.uv] environments`) excludes the image's Python and platform "
        "has nothing to install there. The image's Python is the one its own `python3` reports.",
        example='[project]\nrequires-python = ">=3.12"   # the image runs Python 3.11.2',
        fix="Build FROM an image with a Python the project allows, or widen `requires-python` (or `environments`) and relock.",
    ),
    "image-cuda-mismatch": RuleDoc(
        why="The lock moved to builds for another CUDA major than the image has (`nvidia-nccl-cu13` or `torch 2.9.0+cu130` into a "
        "CUDA 12 image): `uv sync` installs them next to the image's CUDA libraries, and the first GPU call fails or loads the "
        "wrong library. The image's CUDA comes from its config (`CUDA_VERSION`) or its `nvidia-cuda-runtime` distribution; a "
        "package's from its name (`-cu12`, `-cuda12x`), its local version (`+cu128`) or, for the few whose versions follow the "
        "CUDA release (`nvidia-cuda-runtime`, `nvidia-cublas`, `cuda-toolkit`), its version. A CUDA library the Dockerfile keeps "
        "out for the image's own (`--no-install-package nvidia-nccl-cu13`) is reported too when the image's CUDA is another major: "
        "the rest of the lock was resolved for the library it keeps out.",
        example="# the image: CUDA_VERSION=12.9.1; uv.lock: nvidia-nccl-cu13 2.28.9, installed by\nRUN uv sync --locked --extra dev",
        fix="Relock for the image's CUDA (its index, its `-cuNN` packages), or keep the package out with `--no-install-package` "
        "when the image ships its own build.",
    ),
    "unused-suppression": RuleDoc(
        why="A `# depsync: ignore[rule-id]` comment silences one finding (see docs/configuration.md, \"Suppressing one finding\"). "
        "When the finding goes away (the problem was fixed, the line moved) the comment stays behind and would silence the next, "
        "real problem on that line; an id that names no rule silences nothing at all. In a Dockerfile a comment only counts where "
        "it is a comment: Docker has no trailing comments after `ARG`, `FROM` or an exec-form `RUN` (the text becomes part of the "
        "instruction), and inside a heredoc script's `\\` continuation a comment line ends the shell command.",
        example="ARG UV_VERSION=0.7.2  # depsync: ignore[uv-version-mismatch]\n# or: a comment for a rule that reports nothing on the next line\n"
        "# depsync: ignore[docker-not-locked]\nRUN uv sync --locked",
        fix="Remove the comment (or the id from it). A misplaced one goes alone on the line above the instruction.",
    ),
}


def render(rule: Rule) -> str:
    """One rule's page as Markdown, the way `ruff rule` prints one."""
    page = DOCS[rule.id]
    fixable = "Fix: `depsync check --fix` (see below)." if rule.fixable else "Fix: by hand (no automatic fix)."
    example = "\n".join(["```", page.example, "```"])
    return "\n".join(
        [
            f"# {rule.id} ({rule.severity})",
            "",
            f"Finds: {rule.summary}.",
            "",
            fixable,
            "",
            "## Why it matters",
            "",
            page.why,
            "",
            "## Example",
            "",
            example,
            "",
            "## How to fix it",
            "",
            page.fix,
            "",
            f"Change its severity with `[tool.depsync] severity = {{ {rule.id} = \"error\" | \"warning\" | \"info\" | \"off\" }}`.",
        ]
    ) + "\n"
