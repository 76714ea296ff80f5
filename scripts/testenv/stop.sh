#!/usr/bin/env bash
# Stop an environment started by start.sh and remove its run dir.
# Usage: scripts/testenv/stop.sh DIR
set -uo pipefail

DIR="${1:?usage: stop.sh DIR}"
[[ -f "$DIR/env" ]] || { echo "stop.sh: $DIR/env not found" >&2; exit 1; }
case "$(basename "$DIR")" in
  bootcplan-testenv.*) ;;
  *) echo "stop.sh: refusing to remove $DIR (not a bootcplan-testenv dir)" >&2; exit 1 ;;
esac

APISERVER_PID="$(sed -n 's/^APISERVER_PID=//p' "$DIR/env")"
ETCD_PID="$(sed -n 's/^ETCD_PID=//p' "$DIR/env")"
CONTROLLER_MANAGER_PID="$(sed -n 's/^CONTROLLER_MANAGER_PID=//p' "$DIR/env")"
SCHEDULER_PID="$(sed -n 's/^SCHEDULER_PID=//p' "$DIR/env")"

# Only kill a pid if it still is our process (its command line mentions DIR).
ours() { [[ -n "$1" ]] && grep -qF "$DIR" "/proc/$1/cmdline" 2>/dev/null; }

stop_pid() { # stop_pid PID  -> SIGTERM, wait up to 10 s, then SIGKILL
  local pid=$1 i
  ours "$pid" || return 0
  kill -TERM "$pid" 2>/dev/null || return 0
  for (( i = 0; i < 50; i++ )); do
    ours "$pid" || return 0
    sleep 0.2
  done
  kill -KILL "$pid" 2>/dev/null || true
  sleep 0.2
}

# The controllers first: they would log every refused request of a stopping API server.
stop_pid "$CONTROLLER_MANAGER_PID"
stop_pid "$SCHEDULER_PID"
stop_pid "$APISERVER_PID"
stop_pid "$ETCD_PID"
rm -rf -- "$DIR"
