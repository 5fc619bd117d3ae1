#!/usr/bin/env bash
# Prepare a real Docker engine and the test image on a Debian machine without a registry.
#   containers/setup-engine.sh [IMAGE]      (default image: depsync-test:bookworm)
# Idempotent: installs docker.io and debootstrap only when missing, starts dockerd only
# when the engine does not answer, builds the image only when it is not there yet.
# The image: Debian bookworm minbase with python3, git and CA certificates, plus the uv
# binary from the uv PyPI wheel of the version installed on the host (so host and
# container lock with the same uv).
set -euo pipefail
IMAGE="${1:-depsync-test:bookworm}"
SUDO=""
[ "$(id -u)" = 0 ] || SUDO="sudo"

if ! command -v dockerd >/dev/null || ! command -v debootstrap >/dev/null; then
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq docker.io debootstrap >/dev/null
fi

if ! docker version >/dev/null 2>&1; then
    $SUDO sh -c 'nohup dockerd >/var/log/depsync-dockerd.log 2>&1 &'
    for _ in $(seq 1 60); do docker version >/dev/null 2>&1 && break; sleep 1; done
fi
docker version --format 'docker engine {{.Server.Version}}'

UV_VERSION="$(uv --version | awk '{print $2}')"
if docker image inspect "$IMAGE" >/dev/null 2>&1; then
    if [ "$(docker run --rm "$IMAGE" uv --version | awk '{print $2}')" = "$UV_VERSION" ]; then
        echo "image $IMAGE present (uv $UV_VERSION)"
        exit 0
    fi
    echo "image $IMAGE has another uv than the host's $UV_VERSION: rebuilding"
fi

WORK="$(mktemp -d)"
trap '$SUDO rm -rf "$WORK"' EXIT
echo "building $IMAGE (debootstrap bookworm, uv $UV_VERSION)"
$SUDO debootstrap --variant=minbase --include=python3,git,ca-certificates bookworm "$WORK/root" >"$WORK/debootstrap.log" 2>&1 \
    || { tail -20 "$WORK/debootstrap.log"; exit 1; }
python3 -m pip download --quiet --no-deps --only-binary=:all: --dest "$WORK/wheel" "uv==$UV_VERSION"
python3 - "$WORK" <<'PY'
import sys, zipfile, pathlib
work = pathlib.Path(sys.argv[1])
wheel = next((work / "wheel").glob("uv-*.whl"))
with zipfile.ZipFile(wheel) as archive:
    name = next(n for n in archive.namelist() if n.endswith("/scripts/uv"))
    target = work / "root" / "usr" / "local" / "bin" / "uv"
    target.write_bytes(archive.read(name))
    target.chmod(0o755)
PY
$SUDO rm -rf "$WORK/root/var/cache/apt/archives/"*.deb
$SUDO tar -C "$WORK/root" -c . | docker import --change 'ENV PATH=/usr/local/bin:/usr/bin:/bin' --change 'WORKDIR /workspace' - "$IMAGE" >/dev/null
docker run --rm "$IMAGE" uv --version
