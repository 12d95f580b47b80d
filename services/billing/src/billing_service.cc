#include "toolgate/billing/billing_service.h"

namespace toolgate::billing {

BillingService::BillingService(bus::Service& service, pg::Pool& pool, redis::Client& redis,
                               Config config)
    : service_(service),
      config_(config),
      ledger_(pool),
      balances_(redis, config_.limits),
      settler_(service.bus(), ledger_, balances_, retries_, config_),
      reaper_(ledger_, balances_, config_),
      stage_(service.bus(), balances_, ledger_, config_),
      api_(ledger_, balances_, retries_) {
  api_.AddRoutes(router_);
}

Status BillingService::Start() {
  // Settlement first, so that no job is forwarded before its result can be received.
  Status s = service_.Handle("tg.billing.settle.*", "billing",
                             [this](bus::Message&& m) { settler_.OnResult(std::move(m)); });
  if (s.ok()) {
    // Inline: every result reaches this subscription too and is dropped at once; only the rare
    // notice goes to the worker pool.
    s = service_.HandleInline("tg.billing.settle.*", "", [this](bus::Message&& m) {
      if (!m.no_responders) return;
      service_.pool().Submit([this, m = std::move(m)] { settler_.OnNoResponders(m); });
    });
  }
  if (s.ok()) {
    s = service_.Handle("tg.invoke.billing", "billing",
                        [this](bus::Message&& m) { stage_.Handle(std::move(m)); });
  }
  if (s.ok()) s = core::ServeHttp(service_, router_);
  if (s.ok()) reaper_.Start();
  return s;
}

void BillingService::Stop() {
  settler_.Stop();
  reaper_.Stop();
}

}  // namespace toolgate::billing
