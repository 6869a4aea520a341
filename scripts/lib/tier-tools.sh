#!/usr/bin/env bash
# Which Go-built tools each test tier runs, and the wait for them beside a background build.
# Sourced by scripts/test-all.sh (and its unit test); do not execute it.
#   MESH_RL_BUILD_STATUS=<dir>  the status folder a background scripts/tools/build-all.sh writes
#   MESH_RL_BUILD_PID=<pid>     that build's process: the wait stops if it ends first
#   MESH_RL_BUILD_POLL=<s>      how often the wait looks (default 5)
# shellcheck shell=bash

# The Go-built tools (names as in scripts/tools/build-all.sh) each tier runs.
declare -A tier_tools=(
  [rls]="debian ratelimit prometheus"
  [istio]="istioctl kube-score"
  [cluster]="debian etcd kube-apiserver kwok istioctl"
  [e2e]="debian etcd kube-apiserver kwok pulumi pulumi-kubernetes pulumi-random"
)
# await_tools <tier>: with MESH_RL_BUILD_STATUS, wait until every tool of the tier has a status.
# A failed build ends the wait like a finished one: the tier's own check of its tools then rebuilds
# or reports SKIPPED (which fails under CI).
await_tools() {
  local dir=${MESH_RL_BUILD_STATUS:-} need=${tier_tools[$1]:-} start t missing
  [[ -n $dir && -n $need ]] || return 0
  start=$(date +%s)
  while :; do
    missing=()
    for t in $need; do [[ -f "$dir/$t" ]] || missing+=("$t"); done
    ((${#missing[@]} == 0)) && break
    [[ -f "$dir/all-done" ]] && break
    if [[ -n ${MESH_RL_BUILD_PID:-} ]] && ! kill -0 "$MESH_RL_BUILD_PID" 2>/dev/null; then
      echo "=== tier $1: the background build ended without: ${missing[*]}"; break
    fi
    sleep "${MESH_RL_BUILD_POLL:-5}"
  done
  local waited=$(( $(date +%s) - start )) states=""
  for t in $need; do states+=" $t=$(cut -d' ' -f1 "$dir/$t" 2>/dev/null || echo none)"; done
  echo "=== tier $1: waited ${waited}s for its tools:${states}"
  waits+=("$1 ${waited}s")
}
waits=()
