-- Argo CD health check for bootcplan.dev/v1alpha1 Rollout: the rollout spec itself, whose
-- status `bootcplan apply` writes (docs/gitops.md "The rollout status"; src/apply/report/rollout-status.ts). The phase is
-- already Argo CD's vocabulary: Progressing (a wave runs, or the next run continues),
-- Suspended (outside the maintenance window), Degraded (a human is needed: stale plan,
-- halted pool, blocked by policy), Healthy (the plan is applied). A status written for an
-- older spec than the one synced is not this spec's health yet.
local hs = { status = "Progressing", message = "Waiting for bootcplan apply to report the rollout status" }
if obj.status == nil or obj.status.phase == nil then
  return hs
end
local st = obj.status
local generation = obj.metadata ~= nil and obj.metadata.generation or nil
if st.phase ~= "Degraded" and generation ~= nil and st.observedGeneration ~= generation then
  hs.message = "Waiting for bootcplan apply to take generation " .. tostring(generation) .. " (the last run said: " .. (st.message or "") .. ")"
  return hs
end
if st.phase == "Healthy" or st.phase == "Progressing" or st.phase == "Suspended" or st.phase == "Degraded" then
  hs.status = st.phase
else
  hs.status = "Unknown"
end
hs.message = st.message or st.phase
return hs
