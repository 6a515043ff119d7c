#!/bin/sh
# Provisioning of the Vagrant VM (Ubuntu 22.04): p4lang's prebuilt P4 tools from the openSUSE Build
# Service, then ina's own setup (apt packages, virtualenv) with Python 3.11.
set -eu
export DEBIAN_FRONTEND=noninteractive

release="xUbuntu_22.04"
repo="https://download.opensuse.org/repositories/home:/p4lang/${release}"
apt-get update -q
apt-get install -y -q --no-install-recommends curl gnupg ca-certificates
echo "deb ${repo}/ /" > /etc/apt/sources.list.d/home-p4lang.list
curl -fsSL "${repo}/Release.key" | gpg --dearmor > /etc/apt/trusted.gpg.d/home-p4lang.gpg
apt-get update -q
apt-get install -y -q p4lang-p4c p4lang-bmv2 p4lang-pi python3.11 python3.11-venv python3.11-dev

cd /vagrant
PYTHON=python3.11 VENV=/home/vagrant/ina-venv bash scripts/setup.sh
echo "ina: ready. Run: cd /vagrant && sudo make VENV=/home/vagrant/ina-venv run"
