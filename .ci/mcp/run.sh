#!/usr/bin/env bash
# MCP against clients no one here wrote: the official conformance suite
# (@modelcontextprotocol/conformance, every server scenario) and the MCP
# Inspector's CLI (@modelcontextprotocol/inspector-cli) driving tools/list
# and tools/call with a Bearer header, both against a dev-mode maestro's
# /mcp.
#
# The npm packages, and the Node 22 the suite needs (the "node" package
# ships the binary), go into .ci/mcp/node_modules (ignored by git), pinned
# by package-lock.json.
#
# The suite's client sends no headers and maestro's /mcp never runs
# without an agent key, so the suite talks to auth-proxy.mjs, which adds
# the demo agent's key and forwards everything else (Host included) as it
# came. Scenarios the suite expects to fail are listed, each with its
# reason, in conformance-baseline.yml: only those that call the reference
# server's fixtures. The suite exits non-zero on any other failure, and on
# a listed scenario that passes. The suite counts a scenario that runs no
# check as passed; conformance-summary.mjs reports it as not applicable
# instead, and fails the run unless the baseline lists it so, with its
# reason.
#
# Last, the official TypeScript SDK's client (sdk-client.mjs) holds its
# standalone SSE stream and a tool call the sandbox stand-in holds while
# the server gets SIGTERM: the stream must end at once, the call finish
# with its answer, and the server exit 0 well inside the drain window.
#
# Everything it starts is stopped on exit, by PID.
#
# Usage: .ci/mcp/run.sh [RESULTS-DIR]   (default results/mcp)
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD

export GOTOOLCHAIN=go1.27.3
here=.ci/mcp
results=${1:-results/mcp}
agent_key=demo-agent-key
# The server's drain window on SIGTERM, in seconds.
drain_timeout=30

# shellcheck source=../lib.sh
source .ci/lib.sh

log() { echo "mcp: $*" >&2; }
started=$(date +%s)

command -v npm >/dev/null || { log "npm is required"; exit 1; }

# The worker builds while npm installs.
log "building the worker"
go build -o "$work/worker" ./cmd/worker >"$work/build.log" 2>&1 &
build_pid=$!
pids+=("$build_pid")

log "installing the conformance suite, the inspector CLI and Node 22 (pinned in $here/package-lock.json)"
npm ci --prefix "$here" --no-audit --no-fund --loglevel=error >&2
node22=$PWD/$here/node_modules/.bin/node
bin=$PWD/$here/node_modules/.bin
"$node22" -e 'if (+process.versions.node.split(".")[0] < 22) { console.error("need Node >= 22, got " + process.version); process.exit(1) }'
log "installed in $(($(date +%s) - started))s; using Node $("$node22" --version)"

# free_ports N: N consecutive loopback ports no one listens on (the
# embedded Temporal server takes its frontend port and the next three),
# below Linux's ephemeral range, where outgoing connections take theirs.
free_ports() {
  "$node22" -e '
    const net = require("net");
    const n = +process.argv[1];
    const tryBase = (b) => new Promise((res) => {
      const servers = [];
      const next = (i) => {
        if (i === n) { servers.forEach((s) => s.close()); return res(true); }
        const s = net.createServer().once("error", () => { servers.forEach((s) => s.close()); res(false); })
          .listen(b + i, "127.0.0.1", () => { servers.push(s); next(i + 1); });
      };
      next(0);
    });
    (async () => {
      for (;;) {
        const base = 10000 + Math.floor(Math.random() * 22000);
        if (await tryBase(base)) { console.log(base); return; }
      }
    })();' "$1"
}

if ! wait "$build_pid"; then
  log "the worker did not build:"
  cat "$work/build.log" >&2
  exit 1
fi
log "worker built after $(($(date +%s) - started))s"

http_port=$(free_ports 1)
temporal_port=$(free_ports 4)
url=http://127.0.0.1:$http_port
# The ledger stays in the scratch data directory: a DATABASE_URL from the
# environment would share a database with whatever else uses it, and the
# agent's open-session cap counts every session there.
env -u DATABASE_URL "$work/worker" --dev --http-addr "127.0.0.1:$http_port" --temporal-port "$temporal_port" \
  --data-dir "$work/data" --drain-timeout "${drain_timeout}s" >"$work/worker.log" 2>&1 &
worker_pid=$!
pids+=("$worker_pid")
for _ in $(seq 1200); do
  if curl -fsS "$url/readyz" >/dev/null 2>&1; then
    break
  fi
  if ! kill -0 "$worker_pid" 2>/dev/null; then
    log "the dev server exited before it was ready:"
    tail -n 30 "$work/worker.log" >&2
    exit 1
  fi
  sleep 0.1
done
curl -fsS "$url/readyz" >/dev/null || { log "the dev server was not ready within 120s:"; tail -n 30 "$work/worker.log" >&2; exit 1; }
log "dev server ready at $url after $(($(date +%s) - started))s"

"$node22" "$here/auth-proxy.mjs" "$url" "$agent_key" >"$work/proxy.port" 2>"$work/proxy.log" &
pids+=($!)
for _ in $(seq 100); do
  [ -s "$work/proxy.port" ] && break
  sleep 0.1
done
proxy=http://127.0.0.1:$(cat "$work/proxy.port")

mkdir -p "$results"
rm -rf "$results/conformance"
results=$(cd "$results" && pwd)
status=0

log "conformance: every server scenario against $proxy/mcp (the demo agent's key added)"
(cd "$work" && PATH="$bin:$PATH" conformance server --url "$proxy/mcp" --suite all \
  --expected-failures "$root/$here/conformance-baseline.yml" -o "$results/conformance") \
  >"$results/conformance.txt" 2>&1 || status=$?
if [ "$status" -ne 0 ]; then
  sed -n '/=== SUMMARY ===/,$p' "$results/conformance.txt" >&2
  log "conformance failed (exit $status): a scenario outside the baseline failed, or a listed one passed"
fi
if ! "$node22" "$here/conformance-summary.mjs" "$results/conformance" "$here/conformance-baseline.yml" "$results/conformance-summary.json"; then
  log "conformance: a scenario ran no check unlisted, or a scenario listed as not applicable ran checks"
  status=1
fi

# inspector runs the inspector CLI. Version 1.0.3 finds its own
# package.json as "../package.json" relative to the working directory, so
# it runs from node_modules.
inspector() {
  (cd "$here/node_modules" && PATH="$bin:$PATH" mcp-inspector-cli --cli "$url/mcp" --transport http "$@")
}

log "inspector: tools/list with the agent's Bearer key"
if inspector --method tools/list --header "Authorization: Bearer $agent_key" >"$results/inspector-tools-list.json" 2>"$work/inspector.err" &&
  "$node22" -e '
    const out = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
    const byName = Object.fromEntries(out.tools.map((t) => [t.name, t]));
    const want = (ok, what) => { if (!ok) { console.error("inspector tools/list: " + what); process.exit(1) } };
    want(byName.lookup_tenant?.annotations?.readOnlyHint === true, "lookup_tenant is read-only");
    want(byName.send_sms?.annotations?.destructiveHint === true, "send_sms is destructive");
    want(byName.send_sms?.annotations?.idempotentHint === true, "send_sms is idempotent by its derived key");
    want(byName.maestro_invocation !== undefined, "maestro_invocation is listed");
    want(byName.lookup_tenant?.inputSchema?.properties?.tenant_id !== undefined, "the catalog schema is listed");
    console.error("inspector tools/list: " + out.tools.length + " tools, annotations as the catalog classes them");
  ' "$results/inspector-tools-list.json"; then :; else
  status=1
  cat "$work/inspector.err" >&2
fi

log "inspector: tools/call lookup_tenant in session mcp-ci-1 (X-Call-Id)"
if inspector --method tools/call --tool-name lookup_tenant --tool-arg tenant_id=t_100 \
  --header "Authorization: Bearer $agent_key" --header "X-Call-Id: mcp-ci-1" \
  >"$results/inspector-tools-call.json" 2>"$work/inspector.err" &&
  "$node22" -e '
    const out = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
    const obs = out.structuredContent;
    if (out.isError || obs?.status !== "success" || obs?.payload?.id !== "t_100" || out.content?.[0]?.text !== obs.wording) {
      console.error("inspector tools/call: unexpected result " + JSON.stringify(out));
      process.exit(1);
    }
    console.error("inspector tools/call: " + obs.status + ", invocation " + obs.source.invocation_id + ": " + obs.wording);
  ' "$results/inspector-tools-call.json"; then :; else
  status=1
  cat "$work/inspector.err" >&2
fi

log "inspector: a wrong Bearer key is refused"
if inspector --method tools/list --header "Authorization: Bearer not-a-key" >"$work/refused.json" 2>"$work/refused.err"; then
  log "inspector connected with a wrong key"
  status=1
elif ! grep -Eq '401|invalid token' "$work/refused.err"; then
  log "inspector failed without a 401:"
  cat "$work/refused.err" >&2
  status=1
fi

# Shutdown with a client connected goes last: it stops the server the
# steps above share.
log "shutdown: SIGTERM while the TypeScript SDK's client holds its stream and a call (drain window ${drain_timeout}s)"
sandbox=$(sed -n 's/.*stand-ins:.* sandbox \(http[^ ]*\).*/\1/p' "$work/worker.log" | head -n 1)
faults=$sandbox/_standin/faults
held() { curl -fsS "$faults" | "$node22" -e 'let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => console.log(JSON.parse(s).held))'; }
# await_line FILE PATTERN SECONDS: wait until FILE has a line matching
# PATTERN.
await_line() {
  for _ in $(seq $(($3 * 10))); do
    grep -q "$2" "$1" 2>/dev/null && return 0
    sleep 0.1
  done
  return 1
}
curl -fsS -X POST "$faults" -d '{"action":"hang","method":"GET","path":"/v1/tenants/t_100"}' >/dev/null
"$node22" "$here/sdk-client.mjs" "$url/mcp" "$agent_key" mcp-ci-shutdown lookup_tenant '{"tenant_id":"t_100"}' \
  >"$work/sdk-client.out" 2>"$work/sdk-client.err" &
client_pid=$!
pids+=("$client_pid")
shutdown_ok=1
if ! await_line "$work/sdk-client.out" '^stream-open' 30 || ! await_line "$work/sdk-client.out" '^calling' 30; then
  log "shutdown: the TypeScript SDK's client did not connect:"
  cat "$work/sdk-client.out" "$work/sdk-client.err" >&2
  shutdown_ok=0
fi
for _ in $(seq 300); do
  [ "$(held)" = 1 ] && break
  sleep 0.1
done
[ "$(held)" = 1 ] || { log "shutdown: the call did not reach the sandbox"; shutdown_ok=0; }
sigterm_at=$(date +%s%N)
kill -TERM "$worker_pid"
if ! await_line "$work/sdk-client.out" '^stream-ended' 5; then
  log "shutdown: the server did not end the client's stream within 5s of SIGTERM"
  shutdown_ok=0
fi
if grep -q '^result' "$work/sdk-client.out"; then
  log "shutdown: the call was answered while the sandbox still held it"
  shutdown_ok=0
fi
curl -fsS -X POST "$faults/release" >/dev/null
worker_status=0
wait "$worker_pid" || worker_status=$?
took_ms=$((($(date +%s%N) - sigterm_at) / 1000000))
client_status=0
wait "$client_pid" || client_status=$?
log "shutdown: the server exited $worker_status ${took_ms}ms after SIGTERM; the client: $(grep -v '^result' "$work/sdk-client.out" | tr '\n' ' ')"
if [ "$worker_status" -ne 0 ] || [ "$took_ms" -ge $((drain_timeout * 1000 / 2)) ]; then
  log "shutdown: the server must exit 0 within half the drain window:"
  tail -n 20 "$work/worker.log" >&2
  shutdown_ok=0
fi
if [ "$client_status" -ne 0 ] || ! grep -q '^result .*"status":"success"' "$work/sdk-client.out"; then
  log "shutdown: the call in flight did not finish with its answer:"
  cat "$work/sdk-client.out" "$work/sdk-client.err" >&2
  shutdown_ok=0
fi
cp "$work/sdk-client.out" "$results/shutdown-client.txt"
[ "$shutdown_ok" = 1 ] || status=1

log "done in $(($(date +%s) - started))s; results in $results"
exit "$status"
