#!/usr/bin/env bash
# CI: the platform's tests need PostgreSQL (127.0.0.1:5432, database test) and Redis (127.0.0.1:6379). This machine
# kind starts both before a session; one that has stopped is started again with the command the machine documents,
# and if either still cannot be reached the run stops here, saying which, instead of failing tests one by one.
set -euo pipefail

postgres_up() { node -e '
  const s = require("node:net").connect(5432, "127.0.0.1");
  s.on("connect", () => process.exit(0)); s.on("error", () => process.exit(1)); setTimeout(() => process.exit(1), 2000);'; }
redis_up() { node -e '
  const s = require("node:net").connect(6379, "127.0.0.1");
  s.on("connect", () => s.write("PING\r\n")); s.on("data", (d) => process.exit(String(d).startsWith("+PONG") ? 0 : 1));
  s.on("error", () => process.exit(1)); setTimeout(() => process.exit(1), 2000);'; }

if ! postgres_up && command -v pg_ctlcluster >/dev/null; then
  echo "CI: PostgreSQL is not answering on 127.0.0.1:5432; starting it" >&2
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -1)" main start || true
  sleep 2
fi
if ! redis_up && command -v redis-server >/dev/null; then
  echo "CI: Redis is not answering on 127.0.0.1:6379; starting it" >&2
  redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no --dir /var/lib/redis --logfile /var/log/redis/ci.log || true
  sleep 1
fi
postgres_up || { echo "CI: PostgreSQL is required on 127.0.0.1:5432 (database test, trust auth) for the platform tests" >&2; exit 1; }
redis_up || { echo "CI: Redis is required on 127.0.0.1:6379 for the platform tests" >&2; exit 1; }
echo "== PostgreSQL on 127.0.0.1:5432 and Redis on 127.0.0.1:6379 answer"
