-- Tip splitter: the tip and each person's share of a bill, in cents; the cents that do not
-- divide evenly go to the first people, so the shares always add up to the total.
function service_handler(event, context)
  local bill = math.tointeger(event.bill_cents)
  local percent = tonumber(event.tip_percent) or 15
  local people = math.tointeger(event.people) or 1
  if not bill or bill < 0 or percent < 0 or percent > 100 or people < 1 or people > 100 then
    return { statusCode = 400, body = {
      error = "send bill_cents (a whole number), tip_percent (0 to 100) and people (1 to 100)" } }
  end
  local tip = math.floor(bill * percent / 100 + 0.5)
  local total = bill + tip
  local shares = {}
  for i = 1, people do
    shares[i] = total // people + (i <= total % people and 1 or 0)
  end
  return { tip_cents = tip, total_cents = total, shares_cents = shares }
end
