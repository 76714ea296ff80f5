-- Argo CD health check for node.bootc.dev/v1alpha1 BootcNodePool.
-- bootcplan keeps BootcNodePools paused and drives the nodes itself, so "paused" is the
-- normal state: health follows the rollout (status counts and conditions written by the
-- bootc-operator, internal/controller/status.go), not the pause switch.
local hs = { status = "Progressing", message = "Waiting for the bootc-operator to report status" }
if obj.status == nil then
  return hs
end
local st = obj.status
if st.conditions ~= nil then
  for _, c in ipairs(st.conditions) do
    if c.type == "Degraded" and c.status == "True" then
      hs.status = "Degraded"
      hs.message = (c.reason or "Degraded") .. ": " .. (c.message or "")
      return hs
    end
  end
end
local nodes = st.nodeCount or 0
local updated = st.updatedCount or 0
if st.targetDigest ~= nil and st.targetDigest == st.deployedDigest and updated == nodes then
  hs.status = "Healthy"
  hs.message = string.format("%d/%d nodes run %s", updated, nodes, st.targetDigest)
  return hs
end
hs.status = "Progressing"
hs.message = string.format("%d/%d nodes updated, %d updating, %d degraded", updated, nodes, st.updatingCount or 0, st.degradedCount or 0)
return hs
