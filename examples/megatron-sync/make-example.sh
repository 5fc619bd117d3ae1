#!/usr/bin/env bash
# The sync of one real Megatron-LM main into dev, offline, from the files bundled in this
# repository (fixtures/megatron-sync, fixtures/megatron-dev):
#
#   1. builds DIR/megatron-lm, a git repository standing for the project: the merge-base on main,
#      then dev's commit on dev and main's commit on main (pyproject.toml, uv.lock, CODEOWNERS);
#   2. clones it to DIR/sync and does what the sync job does: a branch from origin/dev,
#      `git merge --no-commit --no-ff origin/main`, `depsync reconcile --no-lock --no-fetch`,
#      which writes DIR/sync/pr-body.md (the PR body) and DIR/sync/plan.json.
#
# Usage: examples/megatron-sync/make-example.sh [DIR]    (DIR: new or empty; default: a temp dir)
# depsync is $DEPSYNC, else this clone's .venv/bin/depsync, else the one on PATH.
# Exit 0 when reconcile did its job (its own exit 0 or 1), 2 on bad input, else reconcile's exit.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
DATA="$ROOT/fixtures"

fail() { echo "make-example.sh: $*" >&2; exit 2; }

case "${1:-}" in
    -h | --help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}"; exit 0 ;;
    -*) fail "unknown option $1 (usage: make-example.sh [DIR])" ;;
esac
[ $# -le 1 ] || fail "one directory at most (usage: make-example.sh [DIR])"

if [ -n "${DEPSYNC:-}" ]; then
    depsync="$DEPSYNC"
elif [ -x "$ROOT/.venv/bin/depsync" ]; then
    depsync="$ROOT/.venv/bin/depsync"
else
    depsync="$(command -v depsync)" || fail "depsync not found: install it first (README.md, Install)"
fi
command -v git > /dev/null || fail "git not found"
for file in megatron-sync/base/pyproject.toml megatron-sync/base/uv.lock megatron-sync/main/pyproject.toml \
    megatron-sync/main/uv.lock megatron-dev/pyproject.toml megatron-dev/uv.lock; do
    [ -f "$DATA/$file" ] || fail "missing $DATA/$file (run this from a clone of depsync)"
done

if [ $# -eq 1 ]; then
    DIR="$1"
    [ ! -e "$DIR" ] || [ -d "$DIR" ] || fail "$DIR exists and is not a directory"
    [ ! -d "$DIR" ] || [ -z "$(ls -A "$DIR")" ] || fail "$DIR is not empty"
    mkdir -p "$DIR"
    DIR="$(cd "$DIR" && pwd)"
else
    DIR="$(mktemp -d "${TMPDIR:-/tmp}/depsync-example.XXXXXX")"
fi

# The same run on every machine: no ~/.gitconfig or system git config (a signing or merge setting
# would change the history or the merge), fixed authors and dates (so the commit ids are the ones
# docs/reconcile.md shows), and caches of its own (reconcile asks depsync's cache for rev orders
# and uv's cache for module names; a fresh machine has neither).
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1
export GIT_AUTHOR_NAME="depsync example" GIT_AUTHOR_EMAIL="example@depsync.invalid"
export GIT_COMMITTER_NAME="$GIT_AUTHOR_NAME" GIT_COMMITTER_EMAIL="$GIT_AUTHOR_EMAIL"
export XDG_CACHE_HOME="$DIR/cache" UV_CACHE_DIR="$DIR/cache/uv"
unset DEPSYNC_OWNER_REF DEPSYNC_UPSTREAM_REF GIT_DIR GIT_WORK_TREE

# 1. The project.
PROJECT="$DIR/megatron-lm"
git init -q "$PROJECT"
git -C "$PROJECT" symbolic-ref HEAD refs/heads/main
commit() {  # commit SOURCE-DIR CODEOWNERS DATE MESSAGE
    cp "$1/pyproject.toml" "$1/uv.lock" "$PROJECT/"
    chmod 644 "$PROJECT/pyproject.toml" "$PROJECT/uv.lock"
    mkdir -p "$PROJECT/.github"
    printf '%s\n' "$2" > "$PROJECT/.github/CODEOWNERS"
    git -C "$PROJECT" add -A
    GIT_AUTHOR_DATE="$3" GIT_COMMITTER_DATE="$3" git -C "$PROJECT" commit -q -m "$4"
}
commit "$DATA/megatron-sync/base" "* @owners" "2026-12-01T08:00:00Z" "base"
git -C "$PROJECT" checkout -q -b dev
commit "$DATA/megatron-dev" "* @owners" "2026-12-01T09:00:00Z" "dev: TE f031cf87, cudnn-frontend from git, mamba-ssm from PyPI"
git -C "$PROJECT" checkout -q main
commit "$DATA/megatron-sync/main" "* @main-owners" "2026-12-01T10:00:00Z" "main: TE 4329ff84, nemo-run moved, new sources"
echo "The project, $PROJECT: Megatron-LM's pyproject.toml and uv.lock"
echo "  merge-base $(git -C "$PROJECT" rev-parse --short=10 main~1), dev $(git -C "$PROJECT" rev-parse --short=10 dev), main $(git -C "$PROJECT" rev-parse --short=10 main)"
echo

# 2. The sync, in a clone (origin/dev and origin/main, as the sync job sees them).
SYNC="$DIR/sync"
git clone -q "$PROJECT" "$SYNC"
git -C "$SYNC" config user.name "$GIT_AUTHOR_NAME"  # so that `git commit --no-edit` works there later
git -C "$SYNC" config user.email "$GIT_AUTHOR_EMAIL"
cd "$SYNC"
echo "The sync job, in $SYNC ($("$depsync" --version)):"
show() { echo "\$ $*"; }
show git checkout -b sync/main-into-dev origin/dev
git checkout -q -b sync/main-into-dev origin/dev
show git merge --no-commit --no-ff origin/main
merged=0
git merge --no-commit --no-ff origin/main || merged=$?
[ "$merged" -le 1 ] || { echo "git merge failed (exit $merged)" >&2; exit "$merged"; }
show depsync reconcile --no-lock --no-fetch --summary pr-body.md --plan-json plan.json
reconciled=0
"$depsync" reconcile --no-lock --no-fetch --summary pr-body.md --plan-json plan.json || reconciled=$?
echo
case "$reconciled" in
    0) echo "depsync reconcile exited 0: done, nothing flagged." ;;
    1) echo "depsync reconcile exited 1: done, a reviewer must look at the flagged entries." ;;
    *) echo "depsync reconcile exited $reconciled: an error, every file is as it was." >&2; exit "$reconciled" ;;
esac
changed="$(git diff --cached --name-only | paste -sd ' ' -)"
echo "The PR body: $SYNC/pr-body.md; the plan: $SYNC/plan.json; staged, changed from dev's: ${changed:-nothing}"
echo "What follows (relock in the CI image, commit, guard, push): docs/reconcile.md, a worked sync PR."
