#!/bin/bash
# Installs what ina needs on a Debian or Ubuntu machine, skipping what is already there:
# the apt packages Mininet and the network tests use, a virtualenv with the pinned
# Python dependencies of requirements.txt plus ina itself (editable), and p4runtime-shell's
# own virtualenv beside it (requirements-shell.txt: it needs an older protobuf than ina;
# scripts/side_venv.sh, which `make ns3` uses for ns-3's).
set -eu

VENV="${VENV:-.venv}"
SHELL_VENV="$VENV-shell"  # the name ina.controller.shell looks for
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
    # Those moved to $SHELL_VENV: a virtualenv made before keeps no copy with the old protobuf's pins.
    "$VENV/bin/pip" uninstall -q -y p4runtime-shell p4runtime ipython jedi parso 2>/dev/null || true
    touch "$stamp"
fi

# The per-packet modules compiled by mypyc, once per source content (ina/compiled.py; about a
# minute): without a build the interpreted modules run, so a failure here is only said.
"$VENV/bin/python" -c "import ina.compiled as c; raise SystemExit(c.main())" || true

PYTHON="$PYTHON" bash scripts/side_venv.sh "$SHELL_VENV" requirements-shell.txt p4runtime-shell
