#!/usr/bin/env bash
# Two lanes of tiers for scripts/test-all.sh (sourced by it and by its unit test; do not execute).
#   run_lanes "<tiers>" "<beside>": the tiers named in <beside> run in a second lane, started at once
#   beside the others; each tier still waits for its own tools (await_tools, tier-tools.sh). The
#   second lane's output is held in a file (named when it starts) and printed after the other
#   tiers'; its counts and summary lines are merged into the caller's passed/failed/skipped/summary/
#   waits (MESH_RL_MAIN_NICE: see lower_main_lane). A lane that ends without its results counts as one failure. With an empty <beside>, or
#   when every tier is in it, every tier runs in turn.
# The caller defines run_named_tier <tier> (it updates those variables) and sources tier-tools.sh.
# shellcheck shell=bash

run_lanes() {
  local tiers=$1 beside=$2 t lane=() main=() lane_pid="" lane_log lane_state
  for t in $tiers; do if [[ " $beside " == *" $t "* ]]; then lane+=("$t"); else main+=("$t"); fi; done
  if ((${#lane[@]} == 0 || ${#main[@]} == 0)); then read -ra main <<< "$tiers"; lane=(); fi
  if ((${#lane[@]})); then
    lane_log=$(mktemp) lane_state=$(mktemp)
    echo "=== tiers beside the others: ${lane[*]} (output held in $lane_log, printed after the others)"
    set -m   # a process group of its own, so that an interrupted run stops it too
    (
      passed=0 failed=0 skipped=0 summary=() waits=()
      for t in "${lane[@]}"; do await_tools "$t"; run_named_tier "$t"; done
      declare -p passed failed skipped summary waits | sed 's/^declare -[-a-zA-Z]* /_lane_/' > "$lane_state"
    ) > "$lane_log" 2>&1 &
    lane_pid=$!
    set +m
    trap 'kill -- -"'"$lane_pid"'" 2>/dev/null || true' EXIT
    lower_main_lane
  fi
  for t in "${main[@]}"; do await_tools "$t"; run_named_tier "$t"; done
  [[ -n $lane_pid ]] || return 0
  wait "$lane_pid" || true
  trap - EXIT
  echo "=== the tiers run beside the others: ${lane[*]}"
  cat "$lane_log"
  merge_lane "$lane_state" "${lane[*]}"
  rm -f "$lane_log" "$lane_state"
}

# lower_main_lane: with MESH_RL_MAIN_NICE=<n>, the tiers that run after this (the main lane) run at
# niceness n; the second lane, started before, keeps the caller's. `.ci/run` sets it to the
# background build's niceness, so that the build (which the e2e tier waits for) shares the CPU
# evenly with the main lane while the rls tier's timed windows keep their priority.
lower_main_lane() {
  local want=${MESH_RL_MAIN_NICE:-}
  [[ -n $want ]] || return 0
  (( $(nice) < want )) && renice -n "$want" -p $$ > /dev/null
  (( $(nice) == want )) || echo "=== the main lane runs at niceness $(nice), not ${want} (renice refused)"
}

# merge_lane <state file> <lane tiers>: adds the second lane's counts and lines to the caller's.
merge_lane() {
  local _lane_passed=0 _lane_failed=1 _lane_skipped=0 _lane_summary=("$2: FAILED, the lane ended without its results") _lane_waits=()
  # The state file holds assignments to _lane_* only (written by run_lanes above).
  [[ -s $1 ]] && eval "$(grep '^_lane_' "$1")"
  passed=$((passed + _lane_passed)) failed=$((failed + _lane_failed)) skipped=$((skipped + _lane_skipped))
  summary+=("${_lane_summary[@]}")
  waits+=("${_lane_waits[@]}")
}
