# Sourced by the CI scripts that start processes: a scratch directory
# ($work), the PIDs of what the script starts ($pids), and traps that stop
# exactly those processes and remove the directory however the script ends.
work=$(mktemp -d)
pids=()
# shellcheck disable=SC2317 # run by the EXIT trap
cleanup() {
  local pid
  for pid in "${pids[@]}"; do
    kill "$pid" 2>/dev/null || true
  done
  for pid in "${pids[@]}"; do
    wait "$pid" 2>/dev/null || true
  done
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
