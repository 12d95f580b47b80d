-- Loan calculator: the monthly payment of a fixed-rate loan, total interest, and the first
-- months of the amortization schedule, rounded to cents.
local function cents(x) return math.floor(x * 100 + 0.5) / 100 end

function service_handler(event, context)
  local principal = tonumber(event.principal)
  local rate = tonumber(event.annual_rate_percent)
  local years = tonumber(event.years)
  if not principal or principal <= 0 or not rate or rate < 0 or not years or years <= 0
      or years > 50 then
    return { statusCode = 400, body = {
      error = "send principal (> 0), annual_rate_percent (>= 0) and years (up to 50)" } }
  end
  local n = math.floor(years * 12 + 0.5)
  local r = rate / 100 / 12
  local payment = r == 0 and principal / n or principal * r / (1 - (1 + r) ^ -n)
  local months = math.min(n, math.tointeger(event.schedule_months) or 12)
  local schedule, balance = {}, principal
  for month = 1, months do
    local interest = balance * r
    balance = balance - (payment - interest)
    schedule[#schedule + 1] = {
      month = month,
      interest = cents(interest),
      principal = cents(payment - interest),
      balance = cents(math.max(balance, 0)),
    }
  end
  return {
    monthly_payment = cents(payment),
    payments = n,
    total_paid = cents(payment * n),
    total_interest = cents(payment * n - principal),
    schedule = schedule,
  }
end
