#include "toolgate/billing/credit_application.h"

#include "toolgate/base/log.h"

namespace toolgate::billing {

void ApplyToCachedBalance(BalanceStore& balances, RetryQueue& retries, const std::string& label,
                          const std::string& org_id, int64_t ledger_id, int64_t amount_micro_usd) {
  auto apply = [&balances, org_id, ledger_id, amount_micro_usd] {
    auto r = balances.Credit(org_id, ledger_id, amount_micro_usd);
    return r.ok() ? Status::Ok() : r.status();
  };
  if (Status s = apply(); RetryQueue::IsTransient(s)) {
    retries.Add(label, apply);
  } else if (!s.ok()) {
    log::Error("credit not applied to the cached balance; reconcile repairs it")
        .Str("entry", label)
        .Str("error", s.ToString());
  }
}

}  // namespace toolgate::billing
