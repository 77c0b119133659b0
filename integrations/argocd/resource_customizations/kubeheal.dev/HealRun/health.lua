-- Argo CD health of a kubeheal HealRun: Healthy once healed, Degraded when the run failed or was
-- cancelled, Suspended while a fix waits for a human (or spec.suspend is set), else Progressing.
local hs = {}
if obj.status == nil or obj.status.phase == nil then
  hs.status = "Progressing"
  hs.message = "Waiting for the kubeheal operator to start the run"
  return hs
end
if obj.metadata ~= nil and obj.metadata.generation ~= nil and obj.status.observedGeneration ~= nil
    and obj.status.observedGeneration < obj.metadata.generation then
  hs.status = "Progressing"
  hs.message = "Waiting for the kubeheal operator to see the latest spec"
  return hs
end
local phase = obj.status.phase
local message = obj.status.message or phase
if phase == "Healed" then
  hs.status = "Healthy"
elseif phase == "Failed" then
  hs.status = "Degraded"
  message = (obj.status.reason or "Failed") .. ": " .. message
elseif phase == "Cancelled" then
  hs.status = "Degraded"
elseif phase == "AwaitingApproval" then
  hs.status = "Suspended"
elseif obj.spec ~= nil and obj.spec.suspend == true then
  hs.status = "Suspended"
  message = "Suspended by spec.suspend"
else
  hs.status = "Progressing"
end
hs.message = message
return hs
