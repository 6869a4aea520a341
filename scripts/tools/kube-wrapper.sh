#!/usr/bin/env bash
# The one wrapper module in which the Kubernetes control plane (kube-apiserver,
# kube-controller-manager, kube-scheduler) and kwok are compiled. Sourced by build-kube-apiserver.sh
# and build-kwok.sh; do not execute it.
#
# kwok v0.8.0 is written against the same k8s.io/* v0.36 libraries as Kubernetes v1.36.1. Built in
# one module graph, the two share every compiled package but kwok's own (about three quarters of
# kwok's Go source); built apart they shared none, because their graphs differ in a few modules at
# the root of everything (golang.org/x/sys, x/net, grpc, OpenTelemetry). The price: where kwok asks
# for a newer patch or minor release of such a module than Kubernetes does, the control plane is
# compiled with kwok's (Go's minimal version selection; docs/proof/tools.md lists them).
# shellcheck shell=bash

KUBE_WRAPPER="kubernetes-$KUBE_VERSION"
staging_version="v0.${KUBE_VERSION#v1.}"   # v1.36.1 -> v0.36.1
# What the wrapper requires, the same whichever script runs first, so the graph never changes.
KUBE_WRAPPER_SPECS=(
  "k8s.io/kubernetes/cmd/kube-apiserver@$KUBE_VERSION"
  "k8s.io/kubernetes/cmd/kube-controller-manager@$KUBE_VERSION"
  "k8s.io/kubernetes/cmd/kube-scheduler@$KUBE_VERSION"
  "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION"
)

# k8s.io/kubernetes replaces its ~31 staging modules with ./staging/...; the wrapper replaces each
# of them with the published k8s.io/<name>@v0.<minor>.<patch>, read from that go.mod.
wrapper_prepare() {
  local gomod
  gomod=$(go mod download -json "k8s.io/kubernetes@$KUBE_VERSION" | jq -r .GoMod)
  [[ -f "$gomod" ]] || die "no go.mod for k8s.io/kubernetes@$KUBE_VERSION"
  local mods
  mods=$(go mod edit -json "$gomod" | jq -r '.Replace[]? | select(.New.Path | startswith("./staging/")) | .Old.Path')
  [[ -n "$mods" ]] || die "found no staging replaces in $gomod"
  local args=() m
  for m in $mods; do args+=("-replace=$m=$m@$staging_version"); done
  go mod edit "${args[@]}"
  log "kubernetes: replaced $(wc -w <<<"$mods") staging modules with $staging_version"
}
