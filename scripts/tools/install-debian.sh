#!/usr/bin/env bash
# Installs the Debian packages the project's tests need (idempotent: apt runs only when something
# is missing). redis-server for the rate-limit tier; openssl for the local cluster's certificates;
# jq for scripts; curl for health checks; g++ and libre2-dev for the unit tier's check of a
# matcher against the C++ RE2 that Envoy uses (tests/re2/).
set -euo pipefail
source "$(dirname "$0")/../lib/common.sh"
pkgs=(redis-server openssl jq curl ca-certificates g++ libre2-dev)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then log "install-debian: all present (${pkgs[*]})"; exit 0; fi
sudo=""; [[ $(id -u) -eq 0 ]] || sudo="sudo"
t0=$(date +%s)
log "install-debian: installing ${missing[*]}"
$sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
timing_record debian-packages cold $(( $(date +%s) - t0 ))
