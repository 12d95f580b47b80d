#include "toolgate/billing/budget_alerts.h"

#include <map>
#include <set>
#include <utility>

#include "toolgate/base/crypto.h"
#include "toolgate/base/json_writer.h"
#include "toolgate/base/log.h"
#include "toolgate/base/time.h"
#include "toolgate/webhook/signature.h"

namespace toolgate::billing {
namespace {

// Checks waiting at most; each is one settled batch's charges.
constexpr size_t kMaxQueuedCharges = 65'536;

}  // namespace

std::vector<int> ThresholdsReached(int64_t spent_micro_usd, int64_t cap_micro_usd) {
  std::vector<int> out;
  if (cap_micro_usd <= 0) return out;
  for (int threshold : kAlertThresholds) {
    // In 128 bits: a cap may be up to 10^18, which times 100 does not fit 64.
    if (static_cast<__int128>(spent_micro_usd) * 100 >=
        static_cast<__int128>(cap_micro_usd) * threshold) {
      out.push_back(threshold);
    }
  }
  return out;
}

std::string BudgetAlertJson(const BudgetAlert& alert, int64_t now_ms) {
  const Budget& b = alert.budget;
  const BudgetPeriod period = b.period.value_or(BudgetPeriod{});
  JsonWriter w;
  w.BeginObject()
      .Field("type", kBudgetThresholdEvent)
      .Field("timestamp", FormatRfc3339Millis(now_ms));
  w.Key("data").BeginObject().Field("organization_id", alert.org_id);
  w.Key("budget").BeginObject().Field("scope", b.kind == BudgetKind::kKey ? "key" : "organization");
  w.Key("key_id");
  if (b.kind == BudgetKind::kKey) {
    w.String(b.id);
  } else {
    w.Null();
  }
  w.Field("period", period.unit == PeriodUnit::kDay ? "day" : "month")
      .Field("period_start", FormatRfc3339(period.start_ms))
      .Field("resets_at", FormatRfc3339(period.end_ms))
      .EndObject();
  w.Field("threshold_percent", static_cast<int64_t>(alert.threshold_percent))
      .Field("limit_micro_usd", b.cap_micro_usd)
      .Field("spent_micro_usd", alert.spent_micro_usd)
      .EndObject()
      .EndObject();
  return w.Take();
}

std::string AlertClaimKey(const Budget& budget, int threshold_percent) {
  // tg:budget:key:<id>:d:<day> → tg:budget_alert:key:<id>:d:<day>:<threshold>
  std::string key = BudgetKey(budget);
  key.replace(0, std::string_view("tg:budget:").size(), "tg:budget_alert:");
  return key + ":" + std::to_string(threshold_percent);
}

std::string AlertMessageId(const std::string& claim_key) {
  return "msg_" + HexEncode(Sha256(claim_key)).substr(0, 32);
}

BudgetAlerts::BudgetAlerts(BalanceStore& balances, BudgetSettingsCache& settings,
                           NotificationEndpointCache& endpoints, redis::Client& redis,
                           webhook::Dispatcher& dispatcher, std::function<int64_t()> now_ms)
    : balances_(balances),
      settings_(settings),
      endpoints_(endpoints),
      redis_(redis),
      dispatcher_(dispatcher),
      now_ms_(now_ms ? std::move(now_ms) : [] { return NowMs(); }),
      queue_(
          1024, [this](std::vector<CapturedCharge> charges) { Check(std::move(charges)); },
          kMaxQueuedCharges) {}

BudgetAlerts::~BudgetAlerts() {
  Stop();
}

void BudgetAlerts::Stop() {
  queue_.Stop();
}

void BudgetAlerts::OnCaptured(std::vector<CapturedCharge> charges) {
  for (CapturedCharge& c : charges) {
    if (!queue_.Push(std::move(c))) {
      log::Warn("budget alert check dropped: its queue is full");
      return;
    }
  }
}

void BudgetAlerts::Check(std::vector<CapturedCharge> charges) {
  // Each (organization, key) once; each budget once, though several keys share their
  // organization's.
  std::set<std::pair<std::string, std::string>> callers;
  for (CapturedCharge& c : charges) callers.emplace(std::move(c.org_id), std::move(c.key_id));
  const int64_t now = now_ms_();
  std::map<std::string, std::pair<std::string, Budget>> budgets;  // by BudgetKey
  for (const auto& [org_id, key_id] : callers) {
    std::optional<CallBudgetSettings> settings = settings_.Find(org_id, key_id);
    if (!settings) {
      auto loaded = settings_.Load(org_id, key_id);
      if (!loaded.ok()) {
        log::Warn("budget alerts not checked: spending limits unreadable")
            .Str("org_id", org_id)
            .Str("error", loaded.status().ToString());
        continue;
      }
      settings = *loaded;
    }
    for (Budget& b : PeriodBudgetsFor(*settings, org_id, key_id, now)) {
      if (b.cap_micro_usd <= 0) continue;  // counted, not capped: nothing to reach
      std::string key = BudgetKey(b);
      budgets.try_emplace(std::move(key), org_id, std::move(b));
    }
  }
  for (const auto& [key, entry] : budgets) CheckBudget(entry.first, entry.second);
}

void BudgetAlerts::CheckBudget(const std::string& org_id, const Budget& budget) {
  auto view = balances_.ReadBudget(budget);
  if (!view.ok() || !view->spent_micro_usd) {
    if (!view.ok()) {
      log::Warn("budget alert not checked: Redis unreadable")
          .Str("org_id", org_id)
          .Str("error", view.status().ToString());
    }
    return;
  }
  const int64_t spent = *view->spent_micro_usd;
  const std::vector<int> reached = ThresholdsReached(spent, budget.cap_micro_usd);
  if (reached.empty()) return;
  auto endpoint = endpoints_.Get(org_id);
  if (!endpoint.ok()) {
    log::Warn("budget alert not sent: notification endpoint unreadable")
        .Str("org_id", org_id)
        .Str("error", endpoint.status().ToString());
    return;
  }
  if (!endpoint->has_value() || !(*endpoint)->Subscribes(kBudgetThresholdEvent)) return;
  const NotificationEndpoint& target = **endpoint;
  auto key = webhook::SigningKey(target.secret);
  if (!key) {
    log::Error("budget alert not sent: the endpoint's stored secret is malformed")
        .Str("org_id", org_id);
    return;
  }
  for (int threshold : reached) {
    const std::string claim = AlertClaimKey(budget, threshold);
    if (!Claim(claim, budget)) continue;
    const BudgetAlert alert{org_id, budget, threshold, spent};
    webhook::Request request{target.url, AlertMessageId(claim), BudgetAlertJson(alert, now_ms_()),
                             *key};
    log::Info("budget alert")
        .Str("org_id", org_id)
        .Str("webhook_id", request.message_id)
        .Int("threshold_percent", threshold);
    dispatcher_.Enqueue(std::move(request));
  }
}

bool BudgetAlerts::Claim(const std::string& claim_key, const Budget& budget) {
  const int64_t now = now_ms_();
  const int64_t end = budget.period ? budget.period->end_ms : now;
  // As long as the period's budget key lives, so no check in the period can claim it again.
  const int64_t ttl_ms = std::max<int64_t>(end + kPeriodBudgetGraceMs - now, 1000);
  auto reply = redis_.Command({"SET", claim_key, "1", "NX", "PX", std::to_string(ttl_ms)});
  if (!reply.ok()) {
    log::Warn("budget alert not claimed: Redis unreachable")
        .Str("error", reply.status().ToString());
    return false;
  }
  // OK when set; nil when another check claimed it first.
  return reply->type == redis::Reply::Type::kStatus;
}

}  // namespace toolgate::billing
