-- Argo CD health of a kubeheal CodeFixDDS work order: Suspended while it waits for a human
-- decision, Progressing while it is validated or executed, Healthy once executed (or rejected:
-- a decision people made), Degraded when it is invalid, expired or its execution failed.
local hs = {}
if obj.status == nil or obj.status.phase == nil then
  hs.status = "Progressing"
  hs.message = "Waiting for the kubeheal operator to validate the work order"
  return hs
end
local phase = obj.status.phase
hs.message = phase
if phase == "Proposed" then
  hs.status = "Suspended"
  hs.message = "Waiting for a decision in spec.approval"
elseif phase == "Approved" or phase == "Executing" then
  hs.status = "Progressing"
elseif phase == "Executed" then
  hs.status = "Healthy"
elseif phase == "Rejected" then
  hs.status = "Healthy"
  hs.message = "Rejected by " .. (obj.status.approvedBy or "a reviewer")
elseif phase == "Expired" then
  hs.status = "Degraded"
  hs.message = "Expired: " .. (obj.status.message or "not decided before spec.approvalDeadline")
elseif phase == "Invalid" or phase == "Failed" then
  hs.status = "Degraded"
  if obj.status.validation ~= nil then
    for _, rule in ipairs(obj.status.validation) do
      if rule.passed == false then
        hs.message = phase .. ": " .. rule.rule .. ": " .. (rule.message or "failed")
        break
      end
    end
  end
else
  hs.status = "Unknown"
end
return hs
