#!/usr/bin/env bash
# How many counters of one key length a redis-server with the per-value store's rendered arguments
# holds at one maxmemory (docs/proof/benchmarks.md, "request costs and store figures"). Capacity
# only: the counters are written into Redis directly (INCRBY + EXPIRE of the service's key shape,
# through redis-cli --pipe); tests/rls/store-capacity.test.ts fills a store through the real service.
#
#   bash scripts/bench-redis-capacity.sh <maxmemory, e.g. 8mb> <key bytes, at least 40> <keys to send>
#
# Prints the keys held, the empty server's used_memory, evictions and used_memory once full.
set -euo pipefail
mm="$1"; kb="$2"; count="$3"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no --maxmemory "$mm" \
  --maxmemory-policy allkeys-lfu --lfu-log-factor 0 --lfu-decay-time 0 --loglevel warning >/dev/null 2>&1 &
pid=$!
trap 'kill "$pid" 2>/dev/null || true' EXIT
for _ in $(seq 50); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
empty=$(redis-cli -p "$port" info memory | tr -d '\r' | sed -n 's/^used_memory://p')
# <domain>_<key>_<value>_<window start>, the value padded so the whole key is $kb bytes.
python3 - "$kb" "$count" <<'PY' | redis-cli -p "$port" --pipe >/dev/null
import sys
kb, n = int(sys.argv[1]), int(sys.argv[2])
prefix, suffix = "mesh-ratelimit_x-api-key_", "_1764633600"
width = kb - len(prefix) - len(suffix)
out = sys.stdout
for i in range(n):
    k = prefix + str(i).rjust(width, "v") + suffix
    out.write("*3\r\n$6\r\nINCRBY\r\n$%d\r\n%s\r\n$1\r\n1\r\n*3\r\n$6\r\nEXPIRE\r\n$%d\r\n%s\r\n$4\r\n3660\r\n" % (len(k), k, len(k), k))
PY
held=$(redis-cli -p "$port" dbsize)
info=$(redis-cli -p "$port" info all | tr -d '\r')
used=$(sed -n 's/^used_memory://p' <<<"$info")
evicted=$(sed -n 's/^evicted_keys://p' <<<"$info")
echo "maxmemory=$mm key_bytes=$kb sent=$count held=$held empty_used_memory=$empty evicted=$evicted used_memory=$used bytes_per_counter=$(( (used - empty) / held ))"
