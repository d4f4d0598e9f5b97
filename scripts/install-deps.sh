#!/usr/bin/env bash
# Installs what binlogctl needs to build and test, from Debian 12's packages.
# mariadb-server/-client are for the tests that run a private server (live reads, SQL output);
# python3-pymysql and python3-packaging for python-mysql-replication (../shared/clients) in the serve tests;
# the system service is never started (policy-rc.d for the duration of the install).
set -euo pipefail
pkgs=(build-essential cmake pkg-config python3
      libcli11-dev libfmt-dev nlohmann-json3-dev zlib1g-dev libzstd-dev libisal-dev doctest-dev
      libprotobuf-dev protobuf-compiler scdoc libmariadb-dev libssl-dev mariadb-server mariadb-client
      python3-pymysql python3-packaging)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO=sudo
  export DEBIAN_FRONTEND=noninteractive
  policy=""
  if [ ! -e /usr/sbin/policy-rc.d ]; then  # keep the packages from starting mariadb.service
    policy=/usr/sbin/policy-rc.d
    printf '#!/bin/sh\nexit 101\n' | $SUDO tee "$policy" >/dev/null
    $SUDO chmod 755 "$policy"
  fi
  rc=0
  { $SUDO apt-get update && $SUDO apt-get install -y --no-install-recommends "${missing[@]}"; } || rc=$?
  [ -z "$policy" ] || $SUDO rm -f "$policy"
  exit "$rc"
fi
