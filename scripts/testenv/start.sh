#!/usr/bin/env bash
# Start a throw-away etcd + kube-apiserver on 127.0.0.1 (random free ports).
#
# Usage: scripts/testenv/start.sh            # prints the run dir on stdout's last line
#        scripts/testenv/stop.sh DIR
#
# The run dir contains:
#   kubeconfig   admin kubeconfig (CA data embedded, bearer token, system:masters)
#   env          shell-sourceable: KUBECONFIG, TESTENV_DIR, TESTENV_SERVER,
#                TESTENV_TOKEN, TESTENV_CA, ETCD_PID, APISERVER_PID, ...
#   ca.crt, token, etcd.log, kube-apiserver.log, ...
#
# Env:
#   KUBEBUILDER_ASSETS / BOOTCPLAN_TESTENV_CACHE / BOOTCPLAN_K8S_VERSION  see build.sh
#   TESTENV_READY_TIMEOUT   seconds to wait for etcd + /readyz (default 60)
#   TESTENV_APISERVER_ARGS  extra kube-apiserver flags (space separated)
#   TESTENV_CONTROLLERS     also start these, against the same API server (space separated):
#                           kube-controller-manager (only the controllers of
#                           TESTENV_KCM_CONTROLLERS) and kube-scheduler; their PIDs go to env
#   TESTENV_KCM_CONTROLLERS the controller-manager's --controllers (default below: the workload
#                           controllers a drain meets; never the node lifecycle controller,
#                           which would taint the kubelet-less nodes unreachable)
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
TIMEOUT="${TESTENV_READY_TIMEOUT:-60}"

log() { printf '[testenv/start %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

read -r -a CONTROLLERS <<<"${TESTENV_CONTROLLERS:-}"
ASSETS="$("$HERE/build.sh" "${CONTROLLERS[@]}" | tail -n1)"
[[ -x "$ASSETS/kube-apiserver" && -x "$ASSETS/etcd" ]] || { log "no assets in '$ASSETS'"; exit 1; }
for c in "${CONTROLLERS[@]}"; do
  [[ -x "$ASSETS/$c" ]] || { log "no $c in '$ASSETS'"; exit 1; }
done

DIR="$(mktemp -d "${TMPDIR:-/tmp}/bootcplan-testenv.XXXXXX")"
chmod 700 "$DIR"
ETCD_PID=""; APISERVER_PID=""; CONTROLLER_PIDS=()
fail() {
  log "ERROR: $*"
  for f in etcd.log kube-apiserver.log kube-controller-manager.log kube-scheduler.log; do
    [[ -f "$DIR/$f" ]] && { log "--- tail $f"; tail -n 30 "$DIR/$f" >&2; }
  done
  for pid in "${CONTROLLER_PIDS[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
  [[ -n "$APISERVER_PID" ]] && kill "$APISERVER_PID" 2>/dev/null || true
  [[ -n "$ETCD_PID" ]] && kill "$ETCD_PID" 2>/dev/null || true
  sleep 1
  [[ -n "$APISERVER_PID" ]] && kill -9 "$APISERVER_PID" 2>/dev/null || true
  [[ -n "$ETCD_PID" ]] && kill -9 "$ETCD_PID" 2>/dev/null || true
  rm -rf "$DIR"
  exit 1
}
trap 'fail "interrupted"' INT TERM

# --- free ports: bind port 0 on 127.0.0.1 and report what the kernel picked --
free_ports() { # free_ports N
  if command -v python3 >/dev/null 2>&1; then
    python3 - "$1" <<'EOF'
import socket, sys
socks = []
for _ in range(int(sys.argv[1])):
    s = socket.socket(); s.bind(("127.0.0.1", 0)); socks.append(s)
print(" ".join(str(s.getsockname()[1]) for s in socks))
EOF
  elif command -v node >/dev/null 2>&1; then
    node -e '
const net=require("net");const n=+process.argv[1];const ps=[];const ss=[];
(function next(){ if(ps.length===n){ss.forEach(s=>s.close());console.log(ps.join(" "));return;}
 const s=net.createServer();s.listen(0,"127.0.0.1",()=>{ps.push(s.address().port);ss.push(s);next();});})();' "$1"
  else
    # fallback: random high ports not currently listening
    local out=() p
    while (( ${#out[@]} < $1 )); do
      p=$(( 20000 + RANDOM % 40000 ))
      if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then out+=("$p"); fi
    done
    echo "${out[*]}"
  fi
}
read -r ETCD_CLIENT_PORT ETCD_PEER_PORT API_PORT KCM_PORT SCHEDULER_PORT <<<"$(free_ports 5)"

# --- certificates / keys -------------------------------------------------------
(
  cd "$DIR"
  umask 077
  openssl req -x509 -newkey rsa:2048 -nodes -days 2 -sha256 \
    -keyout ca.key -out ca.crt -subj "/CN=bootcplan-testenv-ca" \
    -addext "basicConstraints=critical,CA:TRUE" \
    -addext "keyUsage=critical,keyCertSign,cRLSign,digitalSignature" 2>/dev/null
  openssl req -newkey rsa:2048 -nodes -keyout apiserver.key -out apiserver.csr \
    -subj "/CN=kube-apiserver" 2>/dev/null
  cat > apiserver.ext <<'EOF'
basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth
subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,IP:10.0.0.1
EOF
  openssl x509 -req -in apiserver.csr -CA ca.crt -CAkey ca.key -CAcreateserial \
    -days 2 -sha256 -extfile apiserver.ext -out apiserver.crt 2>/dev/null
  openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out sa.key 2>/dev/null
  openssl pkey -in sa.key -pubout -out sa.pub 2>/dev/null
  openssl rand -hex 24 > token
  printf '%s,admin,admin-uid,"system:masters"\n' "$(cat token)" > tokens.csv
  chmod 644 ca.crt
) || fail "openssl failed"
TOKEN="$(cat "$DIR/token")"

# --- etcd ----------------------------------------------------------------------
log "starting etcd on 127.0.0.1:$ETCD_CLIENT_PORT"
ETCD_EXTRA=()
# --unsafe-no-fsync exists in etcd >= 3.5 only (Debian bookworm ships 3.4).
if "$ASSETS/etcd" --help 2>&1 | grep -q -- '--unsafe-no-fsync'; then
  ETCD_EXTRA+=(--unsafe-no-fsync)
fi
setsid "$ASSETS/etcd" \
  --name=testenv \
  --data-dir="$DIR/etcd-data" \
  --listen-client-urls="http://127.0.0.1:$ETCD_CLIENT_PORT" \
  --advertise-client-urls="http://127.0.0.1:$ETCD_CLIENT_PORT" \
  --listen-peer-urls="http://127.0.0.1:$ETCD_PEER_PORT" \
  --initial-advertise-peer-urls="http://127.0.0.1:$ETCD_PEER_PORT" \
  --initial-cluster="testenv=http://127.0.0.1:$ETCD_PEER_PORT" \
  --quota-backend-bytes=1073741824 \
  --logger=zap \
  --log-level=warn \
  "${ETCD_EXTRA[@]}" \
  </dev/null >"$DIR/etcd.log" 2>&1 &
ETCD_PID=$!

deadline=$(( $(date +%s) + TIMEOUT ))
until curl -fsS --max-time 2 "http://127.0.0.1:$ETCD_CLIENT_PORT/health" 2>/dev/null | grep -q '"health":"true"'; do
  kill -0 "$ETCD_PID" 2>/dev/null || fail "etcd exited"
  (( $(date +%s) < deadline )) || fail "etcd not healthy after ${TIMEOUT}s"
  sleep 0.2
done
log "etcd healthy"

# --- kube-apiserver --------------------------------------------------------------
log "starting kube-apiserver on https://127.0.0.1:$API_PORT"
# shellcheck disable=SC2086
setsid "$ASSETS/kube-apiserver" \
  --advertise-address=127.0.0.1 \
  --bind-address=127.0.0.1 \
  --secure-port="$API_PORT" \
  --etcd-servers="http://127.0.0.1:$ETCD_CLIENT_PORT" \
  --etcd-prefix=/registry \
  --endpoint-reconciler-type=none \
  --tls-cert-file="$DIR/apiserver.crt" \
  --tls-private-key-file="$DIR/apiserver.key" \
  --client-ca-file="$DIR/ca.crt" \
  --token-auth-file="$DIR/tokens.csv" \
  --service-account-issuer=https://kubernetes.default.svc \
  --service-account-key-file="$DIR/sa.pub" \
  --service-account-signing-key-file="$DIR/sa.key" \
  --api-audiences=https://kubernetes.default.svc \
  --authorization-mode=RBAC \
  --anonymous-auth=false \
  --allow-privileged=true \
  --service-cluster-ip-range=10.0.0.0/24 \
  --disable-admission-plugins=ServiceAccount \
  --enable-priority-and-fairness=false \
  --cert-dir="$DIR/certs" \
  --profiling=false \
  --v=1 \
  ${TESTENV_APISERVER_ARGS:-} \
  </dev/null >"$DIR/kube-apiserver.log" 2>&1 &
APISERVER_PID=$!

SERVER="https://127.0.0.1:$API_PORT"
until [[ "$(curl -sS --max-time 2 --cacert "$DIR/ca.crt" -H "Authorization: Bearer $TOKEN" \
             "$SERVER/readyz" 2>/dev/null)" == "ok" ]]; do
  kill -0 "$APISERVER_PID" 2>/dev/null || fail "kube-apiserver exited"
  (( $(date +%s) < deadline )) || fail "kube-apiserver not ready after ${TIMEOUT}s"
  sleep 0.25
done
# /readyz is ok once post-start hooks finished; also wait until the
# default namespace exists (created by a controller shortly after).
until curl -fsS --max-time 2 --cacert "$DIR/ca.crt" -H "Authorization: Bearer $TOKEN" \
        "$SERVER/api/v1/namespaces/default" >/dev/null 2>&1; do
  kill -0 "$APISERVER_PID" 2>/dev/null || fail "kube-apiserver exited"
  (( $(date +%s) < deadline )) || fail "namespace default not created after ${TIMEOUT}s"
  sleep 0.25
done

# --- kubeconfig + env --------------------------------------------------------------
CA_B64="$(base64 -w0 < "$DIR/ca.crt")"
cat > "$DIR/kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: testenv
  cluster:
    server: $SERVER
    certificate-authority-data: $CA_B64
users:
- name: admin
  user:
    token: $TOKEN
contexts:
- name: testenv
  context:
    cluster: testenv
    user: admin
    namespace: default
current-context: testenv
EOF
chmod 600 "$DIR/kubeconfig"

# --- controllers ---------------------------------------------------------------------
# Each serves /healthz on its own secure port (a self-signed certificate in DIR/certs-<name>);
# authentication and authorization are delegated to the API server through the admin
# kubeconfig, /healthz is always allowed. Leader election off: one instance per environment.
KCM_CONTROLLERS="${TESTENV_KCM_CONTROLLERS:-disruption-controller,replicaset-controller,deployment-controller,statefulset-controller,garbage-collector-controller}"
KCM_PID=""; SCHEDULER_PID=""
deadline=$(( $(date +%s) + TIMEOUT ))
start_controller() { # start_controller NAME PORT ARGS... -> pid in LAST_PID
  local name=$1 port=$2; shift 2
  setsid "$ASSETS/$name" \
    --kubeconfig="$DIR/kubeconfig" \
    --authentication-kubeconfig="$DIR/kubeconfig" \
    --authorization-kubeconfig="$DIR/kubeconfig" \
    --bind-address=127.0.0.1 \
    --secure-port="$port" \
    --cert-dir="$DIR/certs-$name" \
    --leader-elect=false \
    --v=1 \
    "$@" \
    </dev/null >"$DIR/$name.log" 2>&1 &
  LAST_PID=$!
  CONTROLLER_PIDS+=("$LAST_PID")
}
wait_healthy() { # wait_healthy NAME PID PORT
  until [[ "$(curl -ksS --max-time 2 "https://127.0.0.1:$3/healthz" 2>/dev/null)" == "ok" ]]; do
    kill -0 "$2" 2>/dev/null || fail "$1 exited"
    (( $(date +%s) < deadline )) || fail "$1 not healthy after ${TIMEOUT}s"
    sleep 0.25
  done
}
for c in "${CONTROLLERS[@]}"; do
  case "$c" in
    kube-controller-manager)
      log "starting kube-controller-manager ($KCM_CONTROLLERS) on 127.0.0.1:$KCM_PORT"
      start_controller kube-controller-manager "$KCM_PORT" --controllers="$KCM_CONTROLLERS" \
        --use-service-account-credentials=false
      KCM_PID=$LAST_PID ;;
    kube-scheduler)
      log "starting kube-scheduler on 127.0.0.1:$SCHEDULER_PORT"
      start_controller kube-scheduler "$SCHEDULER_PORT"
      SCHEDULER_PID=$LAST_PID ;;
    *) fail "unknown controller $c in TESTENV_CONTROLLERS" ;;
  esac
done
[[ -n "$KCM_PID" ]] && wait_healthy kube-controller-manager "$KCM_PID" "$KCM_PORT"
[[ -n "$SCHEDULER_PID" ]] && wait_healthy kube-scheduler "$SCHEDULER_PID" "$SCHEDULER_PORT"

cat > "$DIR/env" <<EOF
TESTENV_DIR=$DIR
KUBECONFIG=$DIR/kubeconfig
TESTENV_SERVER=$SERVER
TESTENV_TOKEN=$TOKEN
TESTENV_CA=$DIR/ca.crt
TESTENV_ETCD=http://127.0.0.1:$ETCD_CLIENT_PORT
ETCD_PID=$ETCD_PID
APISERVER_PID=$APISERVER_PID
CONTROLLER_MANAGER_PID=$KCM_PID
SCHEDULER_PID=$SCHEDULER_PID
KUBEBUILDER_ASSETS=$ASSETS
EOF
trap - INT TERM
log "ready: $SERVER (dir $DIR)"
echo "$DIR"
