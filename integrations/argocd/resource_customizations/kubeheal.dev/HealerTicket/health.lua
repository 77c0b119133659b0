-- Argo CD health of a kubeheal HealerTicket: Suspended while a fix waits for a human decision,
-- Progressing while it is queued, analysed or applied, Healthy once applied (or rejected),
-- Degraded when it failed.
local hs = {}
if obj.status == nil or obj.status.phase == nil then
  hs.status = "Progressing"
  hs.message = "Waiting for the kubeheal operator to queue the ticket"
  return hs
end
local phase = obj.status.phase
hs.message = phase
if obj.status.conditions ~= nil then
  for _, condition in ipairs(obj.status.conditions) do
    if condition.type == "Ready" and condition.message ~= nil and condition.message ~= "" then
      hs.message = condition.message
    end
  end
end
if phase == "Proposed" then
  hs.status = "Suspended"
elseif phase == "Queued" or phase == "Analyzing" or phase == "Approved" then
  hs.status = "Progressing"
elseif phase == "Applied" or phase == "Rejected" then
  hs.status = "Healthy"
elseif phase == "Failed" then
  hs.status = "Degraded"
else
  hs.status = "Unknown"
end
return hs
