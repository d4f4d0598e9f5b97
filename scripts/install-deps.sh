#!/usr/bin/env bash
# Installs what binlogctl needs to build and test, from Debian 12's packages.
set -euo pipefail
pkgs=(build-essential cmake pkg-config python3
      libcli11-dev libfmt-dev nlohmann-json3-dev zlib1g-dev libzstd-dev libisal-dev doctest-dev
      libprotobuf-dev protobuf-compiler scdoc)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO=sudo
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update
  $SUDO apt-get install -y --no-install-recommends "${missing[@]}"
fi
