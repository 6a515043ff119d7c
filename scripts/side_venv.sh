#!/bin/bash
# A virtualenv of its own beside ina's for a tool whose pins clash with ina's or that ina does not
# need (p4runtime-shell: .venv-shell; ns-3: .venv-ns3), made and kept in step with its requirements:
#   scripts/side_venv.sh DIR REQUIREMENTS WHAT
# A stamp (DIR/.ina-installed) is written only once everything is installed, so a failed install is
# retried on the next run, and what uses the virtualenv can tell a complete one from a broken one.
set -eu
dir="$1" requirements="$2" what="$3"
PYTHON="${PYTHON:-python3}"
if [ ! -x "$dir/bin/python" ]; then
    echo "ina setup: creating virtualenv $dir for $what"
    "$PYTHON" -m venv "$dir"
fi
stamp="$dir/.ina-installed"
if [ ! -f "$stamp" ] || [ "$requirements" -nt "$stamp" ]; then
    echo "ina setup: installing $what's pinned dependencies into $dir"
    rm -f "$stamp"
    "$dir/bin/pip" install -q --disable-pip-version-check -r "$requirements"
    touch "$stamp"
fi
