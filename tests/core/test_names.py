"""core.names stands in for packaging.utils on the check's path: held to the originals."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from packaging.utils import InvalidSdistFilename, parse_sdist_filename
from packaging.utils import canonicalize_version as original_version
from packaging.version import InvalidVersion

from depsync.core.names import canonicalize_version, sdist_identity

VERSIONS = ["1.0", "1.0.0", "2.14.0+f031cf87", "0", "0.0", "1!2.0.0rc1", "1.0.post1", "1.0.dev0", "1.0a1", "1.0.0b2.post3.dev4+local.1", "10.0", "1.10.0",
            "v1.0", "1.0-1", "not a version", "2.6.0.0", "1.0RC1", "1.0.0+Local_Seg"]


def test_canonicalize_version_agrees_with_packaging() -> None:
    for version in VERSIONS:
        assert canonicalize_version(version) == original_version(version), version


@given(st.lists(st.integers(0, 20), min_size=1, max_size=4), st.sampled_from(["", "a1", "rc2", ".post1", ".dev3", "+abc.1"]))
def test_canonicalize_version_agrees_on_generated_versions(release: list[int], suffix: str) -> None:
    version = ".".join(map(str, release)) + suffix
    assert canonicalize_version(version) == original_version(version)


def test_sdist_identity_agrees_with_packaging() -> None:
    for name in ["megatron_core-0.16.0rc0.tar.gz", "Foo.Bar-1.0.zip", "nover.tar.gz", "a-b-2.0.tar.gz", "x-notaversion!.tar.gz", "pkg-1.0.post1.zip"]:
        try:
            parsed = parse_sdist_filename(name)
            expected = (str(parsed[0]), str(parsed[1]))
        except (InvalidSdistFilename, InvalidVersion):
            expected = None
        assert sdist_identity(name) == expected, name


@given(st.text(alphabet=st.sampled_from(list("aZ09-_.ÄßİK")), max_size=12))
def test_canonicalize_name_agrees_with_packaging_fast_path_or_not(name: str) -> None:
    from packaging.utils import canonicalize_name as original_name

    from depsync.core.names import canonicalize_name

    assert canonicalize_name(name) == original_name(name)


@given(st.text(alphabet=st.sampled_from(list("0123456789.")), min_size=1, max_size=10))
def test_plain_releases_agree_with_packaging_including_leading_zeros(version: str) -> None:
    assert canonicalize_version(version) == original_version(version)
