#!/bin/bash
# Installs what ina needs on a Debian or Ubuntu machine, skipping what is already there:
# the apt packages Mininet and the network tests use, and a virtualenv with the pinned
# Python dependencies of requirements.txt plus ina itself (editable).
set -eu

VENV="${VENV:-.venv}"
PYTHON="${PYTHON:-python3}"
APT_PACKAGES="mininet iproute2 iperf iputils-ping bridge-utils ethtool tcpdump python3-venv python3-dev gcc cpp make shellcheck"

if [ "$(id -u)" -ne 0 ]; then
    echo "ina setup: please run as root (sudo make ...)." >&2
    echo "  ina creates network namespaces, veth pairs and raw sockets for Mininet," >&2
    echo "  and installs apt packages; Linux allows all of these only to root." >&2
    exit 1
fi

missing=""
for pkg in $APT_PACKAGES; do
    if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
        missing="$missing $pkg"
    fi
done
if [ -n "$missing" ]; then
    echo "ina setup: installing apt packages:$missing"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q
    # shellcheck disable=SC2086
    apt-get install -y -q --no-install-recommends $missing
fi

if [ ! -x "$VENV/bin/python" ]; then
    echo "ina setup: creating virtualenv $VENV"
    "$PYTHON" -m venv "$VENV"
fi
stamp="$VENV/.ina-installed"
if [ ! -f "$stamp" ] || [ requirements.txt -nt "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
    echo "ina setup: installing pinned Python dependencies into $VENV"
    "$VENV/bin/pip" install -q --disable-pip-version-check -r requirements.txt
    "$VENV/bin/pip" install -q --disable-pip-version-check --no-deps -e .
    touch "$stamp"
fi
