#!/usr/bin/env bash
# Installs, from Debian 12's packages, whatever npucc needs to build and test and is missing.
# Usage: scripts/setup-deps.sh [extra-package ...]
set -euo pipefail
pkgs=(cmake ninja-build g++ gcc clang make libonnx-dev libprotobuf-dev protobuf-compiler
      libcli11-dev nlohmann-json3-dev libpugixml-dev libgtest-dev libonnx-testdata llvm-14-tools "$@")
missing=()
for p in "${pkgs[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "npucc: installing ${missing[*]}" >&2
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
