#!/usr/bin/env bash
# Builds etcd (server) from the Go module proxy into $CACHE/tools/etcd-<version>/etcd.
set -euo pipefail
source "$(dirname "$0")/../lib/common.sh"

go_wrapper_build etcd "$ETCD_VERSION" etcd go.etcd.io/etcd/server/v3 \
  "-X go.etcd.io/etcd/api/v3/version.GitSHA=module-$ETCD_VERSION" \
  "go.etcd.io/etcd/server/v3@$ETCD_VERSION"
