#!/usr/bin/env bash
# Prepare a real Docker engine and the test image on a Debian machine without a registry.
#   containers/setup-engine.sh [IMAGE]      (default image: depsync-test:bookworm)
# Idempotent: installs docker.io and debootstrap only when missing, starts dockerd only
# when the engine does not answer, builds the image only when it is not there yet.
# An engine that answers is not enough: the script proves a container really starts
# (`docker run --rm IMAGE true`). When none does (seen on a shared machine: the default
# bridge docker0 had vanished, so every container start failed), it restarts the engine,
# which sets its networks up again, says so, and proves it once more.
# The image: Debian bookworm minbase with python3, git and CA certificates, plus the uv
# binary of the uv installed on the host from its PyPI wheel (so host and container lock
# with the same uv).
set -euo pipefail
IMAGE="${1:-depsync-test:bookworm}"
SUDO=""
[ "$(id -u)" = 0 ] || SUDO="sudo"
LOG=/var/log/depsync-dockerd.log

if ! command -v dockerd >/dev/null || ! command -v debootstrap >/dev/null; then
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq docker.io debootstrap >/dev/null
fi

start_engine() {
    $SUDO sh -c "nohup dockerd >>$LOG 2>&1 &"
}

wait_for_engine() {
    for _ in $(seq 1 60); do
        docker version >/dev/null 2>&1 && return 0
        sleep 1
    done
    echo "the Docker engine did not answer within 60 s; the end of $LOG:"
    $SUDO tail -20 "$LOG" || true
    exit 1
}

restart_engine() {
    if command -v systemctl >/dev/null && systemctl is-active --quiet docker 2>/dev/null; then
        $SUDO systemctl restart docker
    else
        # the dockerd this script (or whoever) started: its pid file, never a process by name
        pid="$($SUDO cat /var/run/docker.pid 2>/dev/null || true)"
        if [ -n "$pid" ]; then
            $SUDO kill "$pid" || true
            for _ in $(seq 1 60); do
                $SUDO kill -0 "$pid" 2>/dev/null || break
                sleep 1
            done
        fi
        start_engine
    fi
    wait_for_engine
}

# `docker run --rm IMAGE true`, with its output kept for the message when it fails
START_LOG="$(mktemp)"
container_starts() {
    docker run --rm "$1" true >"$START_LOG" 2>&1
}

prove_containers_start() {
    if container_starts "$1"; then
        echo "a container starts (docker run --rm $1 true)"
        return 0
    fi
    echo "the engine answers but a container does not start: $(tail -1 "$START_LOG")"
    echo "restarting the Docker engine (it sets up its bridge network again)"
    restart_engine
    if container_starts "$1"; then
        echo "after the restart a container starts (docker run --rm $1 true)"
        return 0
    fi
    echo "containers still do not start after restarting the engine:"
    cat "$START_LOG"
    exit 1
}

if ! docker version >/dev/null 2>&1; then
    start_engine
    wait_for_engine
fi
docker version --format 'docker engine {{.Server.Version}}'

WORK="$(mktemp -d)"
trap '$SUDO rm -rf "$WORK" "$START_LOG"' EXIT

UV_VERSION="$(uv --version | awk '{print $2}')"
if docker image inspect "$IMAGE" >/dev/null 2>&1; then
    prove_containers_start "$IMAGE"
    if [ "$(docker run --rm "$IMAGE" uv --version | awk '{print $2}')" = "$UV_VERSION" ]; then
        echo "image $IMAGE present (uv $UV_VERSION)"
        exit 0
    fi
    echo "image $IMAGE has another uv than the host's $UV_VERSION: rebuilding"
fi

echo "building $IMAGE (debootstrap bookworm, uv $UV_VERSION)"
$SUDO debootstrap --variant=minbase --include=python3,git,ca-certificates bookworm "$WORK/root" >"$WORK/debootstrap.log" 2>&1 \
    || { tail -20 "$WORK/debootstrap.log"; exit 1; }
# The host's uv binary is the one from the uv wheel (installed from the lock); a venv made
# by uv has no pip to download the wheel again.
UV_BIN="$(readlink -f "$(command -v uv)")"
$SUDO install -m 0755 "$UV_BIN" "$WORK/root/usr/local/bin/uv"
$SUDO rm -rf "$WORK/root/var/cache/apt/archives/"*.deb
$SUDO tar -C "$WORK/root" -c . | docker import --change 'ENV PATH=/usr/local/bin:/usr/bin:/bin' --change 'WORKDIR /workspace' - "$IMAGE" >/dev/null
prove_containers_start "$IMAGE"
docker run --rm "$IMAGE" uv --version
