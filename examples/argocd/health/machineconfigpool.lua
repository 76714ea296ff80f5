-- Argo CD health check for machineconfiguration.openshift.io/v1 MachineConfigPool.
-- Conditions Updated / Updating / Degraded are the MCO's (pkg/controller/node status).
local hs = { status = "Progressing", message = "Waiting for the Machine Config Operator to report status" }
if obj.status == nil or obj.status.conditions == nil then
  return hs
end
local cond = {}
for _, c in ipairs(obj.status.conditions) do
  cond[c.type] = c
end
local function is_true(t) return cond[t] ~= nil and cond[t].status == "True" end
if is_true("Degraded") or is_true("NodeDegraded") or is_true("RenderDegraded") then
  local c = cond["NodeDegraded"] or cond["RenderDegraded"] or cond["Degraded"]
  if not is_true("NodeDegraded") and not is_true("RenderDegraded") then c = cond["Degraded"] end
  hs.status = "Degraded"
  hs.message = (c.message or c.reason or "Degraded")
  return hs
end
local counts = string.format("%d/%d machines updated", obj.status.updatedMachineCount or 0, obj.status.machineCount or 0)
if is_true("Updated") then
  hs.status = "Healthy"
  hs.message = counts
  return hs
end
if obj.spec ~= nil and obj.spec.paused == true then
  hs.status = "Suspended"
  hs.message = "Pool paused, " .. counts
  return hs
end
hs.status = "Progressing"
hs.message = counts
return hs
