#!/usr/bin/env bash
# Reality eval against independent references that no one here wrote:
#
#   SES     the aws-ses-v2-local emulator (npm), read back with GET /store
#   Twilio  our stand-in behind Prism in proxy mode with --errors, loaded
#           with Twilio's own OpenAPI spec (@twilio/cli-core), so a request
#           or response that drifts from Twilio's schema fails the run
#   HTTP    the sandbox stand-in, directly
#
# Everything it starts is stopped on exit, by PID. The npm packages go into
# .ci/reality/node_modules (ignored by git), pinned by package-lock.json:
# Prism stays at 5.14.2, the last release that supports Node 20 (5.15 and
# later declare Node 24). The spec is fetched, patched (patch-spec.js says
# what and why) and used in a temporary directory, never committed.
#
# Usage: .ci/reality/run.sh [JSON-OUT]   (default results/reality.json)
set -euo pipefail
cd "$(dirname "$0")/../.."

export GOTOOLCHAIN=go1.27.3
here=.ci/reality
json_out=${1:-results/reality.json}
twilio_spec_pkg=@twilio/cli-core@9.0.0
twilio_spec_path=package/src/services/twilio-api/twilio_api_v2010.json

# shellcheck source=../lib.sh
source .ci/lib.sh

log() { echo "reality: $*" >&2; }

# wait_for NAME PID LOG SECONDS COMMAND...: poll until COMMAND succeeds,
# giving up early if the process PID has exited; on failure, show its LOG.
wait_for() {
  local what=$1 pid=$2 logfile=$3 secs=$4
  shift 4
  for _ in $(seq $((secs * 10))); do
    if "$@" >/dev/null 2>&1; then
      return 0
    fi
    if ! kill -0 "$pid" 2>/dev/null; then
      log "$what exited before it was ready:"
      tail -n 20 "$logfile" >&2
      return 1
    fi
    sleep 0.1
  done
  log "$what did not come up within ${secs}s:"
  tail -n 20 "$logfile" >&2
  return 1
}

# free_port asks the kernel for an unused loopback port.
free_port() {
  node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'
}

command -v node >/dev/null || { log "node is required (Node.js 20 or newer)"; exit 1; }

log "installing the reference emulators (pinned in $here/package-lock.json)"
npm ci --prefix "$here" --no-audit --no-fund --loglevel=error >&2

log "fetching Twilio's OpenAPI spec from $twilio_spec_pkg"
npm pack "$twilio_spec_pkg" --pack-destination "$work" --loglevel=error >/dev/null
tar -xzf "$work"/twilio-cli-core-*.tgz -C "$work" "$twilio_spec_path"
node "$here/patch-spec.js" "$work/$twilio_spec_path" "$work/twilio_api_v2010.json"

log "building eval"
go build -o "$work/eval" ./cmd/eval

# The stand-ins print their endpoints as NAME=value lines once serving.
"$work/eval" standins >"$work/standins.env" 2>"$work/standins.log" &
pids+=($!)
wait_for "the stand-ins" "$!" "$work/standins.log" 30 grep -q '^MAESTRO_HTTP_SERVICE_SANDBOX_TOKEN=' "$work/standins.env"
while IFS='=' read -r name value; do
  export "$name=$value"
done <"$work/standins.env"
standin_twilio=$TWILIO_BASE_URL

ses_port=$(free_port)
"$here/node_modules/.bin/aws-ses-v2-local" --host 127.0.0.1 --port "$ses_port" >"$work/ses.log" 2>&1 &
pids+=($!)
ses_pid=$!
export SES_ENDPOINT=http://127.0.0.1:$ses_port SES_STORE_URL=http://127.0.0.1:$ses_port

prism_port=$(free_port)
"$here/node_modules/.bin/prism" proxy "$work/twilio_api_v2010.json" "$standin_twilio" \
  --errors --host 127.0.0.1 --port "$prism_port" >"$work/prism.log" 2>&1 &
pids+=($!)
prism_pid=$!
export TWILIO_BASE_URL=http://127.0.0.1:$prism_port

wait_for "aws-ses-v2-local" "$ses_pid" "$work/ses.log" 60 curl -fsS "$SES_STORE_URL/store"
wait_for "Prism" "$prism_pid" "$work/prism.log" 120 grep -q 'Prism is listening' "$work/prism.log"
log "SES emulator at $SES_ENDPOINT; Twilio stand-in $standin_twilio validated by Prism at $TWILIO_BASE_URL"

mkdir -p "$(dirname "$json_out")"
status=0
"$work/eval" reality --config eval/reality/demo.yaml --json "$json_out" || status=$?
if [ "$status" -ne 0 ]; then
  log "failed (exit $status); Prism's verdicts on the Twilio traffic:"
  grep -E 'VIOLATION|Request terminated|✖' "$work/prism.log" >&2 || log "(none)"
  log "aws-ses-v2-local said:"
  tail -n 20 "$work/ses.log" >&2
fi
log "report written to $json_out"
exit "$status"
