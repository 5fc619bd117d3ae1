"""Which uv cache volumes a run removes (the pure choice, volumes.stale_volumes), and an engine that does not answer: no engine needed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from depsync.errors import DepsyncError
from depsync.shell.runners.endpoint import Endpoint
from depsync.shell.runners.engine import EngineAPI
from depsync.shell.runners.volumes import (
    HOST_LABEL,
    PATH_LABEL,
    REPO_LABEL,
    UID_LABEL,
    cache_volume_name,
    checkout_gone,
    is_owned,
    machine,
    owner_labels,
    prune_cache_volumes,
    pruned_note,
    stale_volumes,
)

HOST = "0123456789abcdef0123456789abcdef/ci-runner-1"
UID = 1000
GONE = {"/work/old-clone", "/ci/ws/job-17"}
REPO = "0f" * 16


def volume(path: str, uid: int = UID, host: str = HOST, created: str = "2026-01-01T00:00:00Z", **changes: Any) -> dict[str, Any]:
    """An Engine API volume object as depsync makes one for the checkout at path."""
    return {"Name": changes.pop("name", cache_volume_name(path, uid, REPO)), "Labels": owner_labels(path, uid, host, REPO), "CreatedAt": created, **changes}


def gone(path: str) -> bool:
    return path in GONE


def test_only_this_machines_and_uids_volumes_of_gone_checkouts() -> None:
    old, ws, here = volume("/work/old-clone", created="2026-02-01T00:00:00Z"), volume("/ci/ws/job-17", created="2026-01-01T00:00:00Z"), volume("/work/here")
    listed = [
        old, ws, here,
        volume("/work/old-clone", host="ffffffffffffffffffffffffffffffff/elsewhere"),  # another machine's: its paths mean nothing here
        volume("/work/old-clone", uid=UID + 1),  # another uid's
        {"Name": cache_volume_name("/work/old-clone", UID, REPO), "Labels": {"io.depsync.role": "cache"}},  # an older depsync's: no owner
        {**volume("/work/old-clone"), "Labels": {**old["Labels"], "io.depsync.role": "lock"}},  # not a cache
        volume("/work/old-clone", name="my-uv-cache"),  # the labels, but not the name depsync derives from them
        volume("/work/old-clone", name=cache_volume_name("/ci/ws/job-17", UID, REPO)),  # the name of another path
        volume("/work/old-clone", name=cache_volume_name("/work/old-clone", UID, "1f" * 16)),  # the name of another repository
        volume("old-clone"),  # a relative path: never depsync's
        {"Name": 7, "Labels": old["Labels"]}, {"Name": "x"}, {},
    ]
    assert stale_volumes(listed, HOST, UID, gone) == [ws["Name"], old["Name"]]  # oldest first
    assert stale_volumes(listed, HOST, UID, gone, keep={ws["Name"]}) == [old["Name"]]


def test_an_older_depsyncs_volume_named_by_path_only_is_still_pruned() -> None:
    labels = {key: value for key, value in owner_labels("/work/old-clone", UID, HOST, REPO).items() if key != REPO_LABEL}
    legacy = {"Name": cache_volume_name("/work/old-clone", UID, None), "Labels": labels}
    assert stale_volumes([legacy], HOST, UID, gone) == [legacy["Name"]]
    assert stale_volumes([{**legacy, "Name": cache_volume_name("/work/old-clone", UID, REPO)}], HOST, UID, gone) == []


def test_a_new_volume_names_its_owner() -> None:
    assert owner_labels("/work/here", UID, HOST, REPO) == {
        "io.depsync.role": "cache", PATH_LABEL: "/work/here", UID_LABEL: "1000", HOST_LABEL: HOST, REPO_LABEL: REPO,
    }


def test_a_volume_is_the_checkouts_only_with_its_labels() -> None:
    mine = owner_labels("/work/here", UID, HOST, REPO)
    assert is_owned(dict(mine), mine)
    assert not is_owned(None, mine) and not is_owned({}, mine) and not is_owned({"io.depsync.role": "cache"}, mine)
    assert not is_owned({**mine, REPO_LABEL: "1f" * 16}, mine)  # another repository checked out at this path
    assert not is_owned({k: v for k, v in mine.items() if k != REPO_LABEL}, mine)  # an older depsync's, shared by every repository here
    assert is_owned({**mine, "com.example.engine": "x"}, mine)  # an engine's own labels beside ours


def test_this_machine_is_its_machine_id_and_hostname() -> None:
    import socket

    try:
        machine_id = Path("/etc/machine-id").read_text().strip()
    except OSError:
        pytest.skip("no /etc/machine-id here")
    assert machine() == f"{machine_id}/{socket.gethostname()}"


def test_a_path_that_is_not_utf8_is_never_labelled_for_pruning() -> None:
    path = os.fsdecode(b"/work/caf\xe9")
    assert PATH_LABEL not in owner_labels(path, UID, HOST, REPO)
    assert stale_volumes([{"Name": cache_volume_name(path, UID, REPO), "Labels": owner_labels(path, UID, HOST, REPO)}], HOST, UID, lambda _p: True) == []


@given(
    st.lists(st.tuples(st.sampled_from(["/work/old-clone", "/ci/ws/job-17", "/work/here", "rel"]), st.sampled_from([UID, UID + 1]),
                       st.sampled_from([HOST, "other"]), st.booleans()), max_size=12)
)
def test_a_removed_volume_is_always_ours_and_its_checkout_gone(specs: list[tuple[str, int, str, bool]]) -> None:
    listed = [volume(path, uid, host) if labelled else {"Name": cache_volume_name(path, uid, REPO), "Labels": {"io.depsync.role": "cache"}}
              for path, uid, host, labelled in specs]
    chosen = stale_volumes(listed, HOST, UID, gone)
    assert set(chosen) == {cache_volume_name(p, u, REPO) for p, u, h, labelled in specs if labelled and u == UID and h == HOST and p in GONE}


def test_checkout_gone_only_on_a_definite_answer(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    assert not checkout_gone(str(tmp_path))
    assert checkout_gone(str(tmp_path / "missing"))
    assert checkout_gone(str(tmp_path / "file"))  # not a directory
    assert checkout_gone(str(tmp_path / "file" / "below"))
    assert not checkout_gone("/work/\0nul")  # cannot be looked at: kept


def test_the_note_names_what_was_removed() -> None:
    assert pruned_note([], 0) is None
    assert pruned_note(["depsync-uv-cache-1-aaaaaaaaaaaaaaaa"], 0) == "removed 1 uv cache volume of checkouts that no longer exist: depsync-uv-cache-1-aaaaaaaaaaaaaaaa"
    assert pruned_note(["a", "b"], 3) == "removed 2 uv cache volumes of checkouts that no longer exist: a, b; 3 more on later runs"


def test_an_engine_that_does_not_answer_only_skips_the_pruning(tmp_path: Path) -> None:
    """In a lock, pruning is housekeeping: no answer is nothing removed. Asked for by the
    operator (`--prune-caches`), it is one line, exit 2."""
    nobody = EngineAPI(Endpoint(f"unix://{tmp_path}/no.sock", "DOCKER_HOST"))
    assert prune_cache_volumes(nobody) == ([], 0)
    with pytest.raises(DepsyncError, match="did not list the cache volumes"):
        prune_cache_volumes(nobody, strict=True)
    result = subprocess.run([sys.executable, "-m", "depsync", "lock", "--prune-caches"], capture_output=True, text=True, timeout=60,
                            env={**os.environ, "DOCKER_HOST": f"unix://{tmp_path}/no.sock"})
    assert result.returncode == 2 and "no Docker engine answers" in result.stderr, result.stderr
