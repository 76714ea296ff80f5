#!/usr/bin/env bash
# Self-check of the test environment: start, exercise a few APIs with curl, stop.
# Usage: scripts/testenv/smoke.sh      (exit 0 = all checks passed)
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

DIR="$("$HERE/start.sh" | tail -n1)"
trap '"$HERE/stop.sh" "$DIR"' EXIT
# shellcheck disable=SC1091
source "$DIR/env"

pass=0 fail=0
req() { # req METHOD PATH [BODY] -> prints HTTP status, body to $DIR/last.json
  local m=$1 p=$2 body=${3:-}
  curl -sS --max-time 10 --cacert "$TESTENV_CA" -H "Authorization: Bearer $TESTENV_TOKEN" \
    -H 'Content-Type: application/json' -X "$m" ${body:+--data "$body"} \
    -o "$DIR/last.json" -w '%{http_code}' "$TESTENV_SERVER$p"
}
check() { # check NAME EXPECTED ACTUAL
  if [[ "$2" == "$3" ]]; then pass=$((pass + 1)); echo "ok   $1" >&2
  else fail=$((fail + 1)); echo "FAIL $1: expected $2, got $3 $(head -c 300 "$DIR/last.json")" >&2; fi
}

check "GET /version" 200 "$(req GET /version)"
grep -q '"gitVersion"' "$DIR/last.json" && echo "     $(grep gitVersion "$DIR/last.json" | tr -d ' ,')" >&2

check "create CRD" 201 "$(req POST /apis/apiextensions.k8s.io/v1/customresourcedefinitions '{
  "apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
  "metadata":{"name":"widgets.smoke.example.com"},
  "spec":{"group":"smoke.example.com","scope":"Namespaced",
    "names":{"kind":"Widget","plural":"widgets","singular":"widget"},
    "versions":[{"name":"v1","served":true,"storage":true,
      "schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}]}}')"
code=000
for _ in $(seq 1 50); do   # the CRD's REST endpoint appears once it is Established
  code="$(req POST /apis/smoke.example.com/v1/namespaces/default/widgets \
    '{"apiVersion":"smoke.example.com/v1","kind":"Widget","metadata":{"name":"w1"},"spec":{"a":1}}')"
  [[ "$code" == 201 ]] && break
  sleep 0.2
done
check "create custom resource" 201 "$code"

check "create Lease" 201 "$(req POST /apis/coordination.k8s.io/v1/namespaces/default/leases \
  '{"metadata":{"name":"smoke"},"spec":{"holderIdentity":"smoke","leaseDurationSeconds":15}}')"
check "get Lease" 200 "$(req GET /apis/coordination.k8s.io/v1/namespaces/default/leases/smoke)"

check "create ServiceAccount" 201 "$(req POST /api/v1/namespaces/default/serviceaccounts '{"metadata":{"name":"smoke"}}')"
check "TokenRequest" 201 "$(req POST /api/v1/namespaces/default/serviceaccounts/smoke/token \
  '{"apiVersion":"authentication.k8s.io/v1","kind":"TokenRequest","spec":{"expirationSeconds":600}}')"

check "create Pod" 201 "$(req POST /api/v1/namespaces/default/pods \
  '{"metadata":{"name":"smoke"},"spec":{"containers":[{"name":"c","image":"busybox"}]}}')"
check "Eviction" 201 "$(req POST /api/v1/namespaces/default/pods/smoke/eviction \
  '{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"smoke","namespace":"default"}}')"

check "create Role (RBAC)" 201 "$(req POST /apis/rbac.authorization.k8s.io/v1/namespaces/default/roles \
  '{"metadata":{"name":"smoke"},"rules":[{"apiGroups":[""],"resources":["pods"],"verbs":["list"]}]}')"

anon="$(curl -sS --max-time 10 --cacert "$TESTENV_CA" -o /dev/null -w '%{http_code}' "$TESTENV_SERVER/version")"
check "anonymous request rejected" 401 "$anon"

echo "$pass passed, $fail failed"
[[ $fail == 0 ]]
