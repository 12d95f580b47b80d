#include "toolgate/billing/config.h"

#include <charconv>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "toolgate/core/charging_flags.h"
#include "toolgate/core/egress_flags.h"
#include "toolgate/core/egress_policy.h"

namespace toolgate::billing {
namespace {

constexpr int64_t kNano = 1'000'000'000;
constexpr int64_t kMaxUnchargedTimeoutSPerHour = 1'000'000'000;

std::optional<int64_t> ParseCount(const std::string& text) {
  int64_t out = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  if (ec != std::errc() || ptr != text.data() + text.size() || out < 0) return std::nullopt;
  return out;
}

Status Bad(const std::string& flag, const std::string& value, const std::string& why) {
  return Status::InvalidArgument("--" + flag + " '" + value + "': " + why);
}

// "127.0.0.1:6379", "[::1]:8080": the address and port (an unspecified address, a service
// listening on every address, is refused on every address by webhook::EndpointRefusal).
std::optional<std::pair<core::IpAddress, uint16_t>> DeniedEndpointOf(std::string_view text) {
  size_t colon = text.rfind(':');
  if (colon == std::string_view::npos || colon + 1 == text.size()) return std::nullopt;
  std::string_view host = text.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  auto port = ParseCount(std::string(text.substr(colon + 1)));
  auto address = core::IpAddress::Parse(host);
  if (!port || *port < 1 || *port > 65535 || !address.ok()) return std::nullopt;
  return std::pair<core::IpAddress, uint16_t>{*address, static_cast<uint16_t>(*port)};
}

}  // namespace

void DefineBillingFlags(Flags& flags) {
  core::DefineChargingFlags(flags);
  // Callbacks follow tools' egress rules; --no-egress and --egress-deny-cidr concern handlers
  // and are accepted so that one set of flags serves both.
  core::DefineOperatorEgressFlags(flags);
  flags.DefineRepeated("egress-deny-addr",
                       "an address:port of the platform itself that no callback may reach, "
                       "whatever --egress-allow-cidr allows (repeatable; `toolgate up` passes "
                       "every one)");
  flags.Define("hold-grace-ms", "60000",
               "a hold older than its timeout plus this is settled or released by the reaper");
  flags.Define("reaper-interval-ms", "5000", "how often abandoned holds are looked for");
  flags.Define("reconcile-check-interval-ms", "60000",
               "how often balances are compared with the ledger for the reconciliation metrics "
               "(0: never)");
  flags.Define("ledger-identity-interval-ms", "300000",
               "how often the whole-ledger identity (credits = balances + platform income + "
               "payouts) is checked for toolgate_billing_ledger_imbalance_micro_usd (0: never)");
  flags.Define("settle-batch", "256",
               "settlements committed in one transaction, and holds placed in one Redis round "
               "trip, at most");
  flags.Define("funding", "grants",
               "where credit comes from: grants (only operators grant it), checkout (bought; "
               "operators grant too) or demo (play money: members top up freely; development "
               "only, `toolgate up` passes it with --demo or --dev-funding)");
  flags.Define("webhook-allow-private-targets", "false",
               "notification webhooks may go to http URLs and to loopback, private and other "
               "non-public addresses (development and tests only)");
  flags.Define("public-url", "",
               "checkout: the web app's public URL, where payers return from the payment page "
               "(default: the URL the edge is reached at)");
  flags.Define("stripe-api-base", "https://api.stripe.com",
               "checkout: Stripe's API base URL (tests point it at a stand-in)");
  flags.Define("stripe-secret-key-file", "",
               "checkout: file holding the Stripe secret key (sk_...); required with "
               "--funding checkout");
  flags.Define("stripe-webhook-secret-file", "",
               "checkout: file holding the signing secret (whsec_...) of the Stripe webhook "
               "endpoint; required with --funding checkout");
  flags.Define("async-queue-per-org", "1000",
               "asynchronous executions an organization may have queued, not yet started; "
               "beyond it Prefer: respond-async is 429 queue_full (0: no limit)");
  flags.Define("async-max-queued-ms", "86400000",
               "how long an asynchronous execution may wait in the queue before it ends failed "
               "(queue_timeout), uncharged");
  flags.Define("execution-retention-hours", "168",
               "how long an asynchronous execution's status and result stay readable (at least "
               "24: an Idempotency-Key is answered for 24 hours)");
  flags.Define("async-stream-replicas", "1",
               "replicas of the JetStream stream of queued executions (3 with a NATS cluster)");
  flags.Define("settle-ack-linger-ms", "20",
               "how long acks of settled results may gather before they go to the executors in "
               "one message (0: at once; at most 1000)");
}

Result<Config> ConfigFromFlags(const Flags& flags) {
  Config config;
  struct Rate {
    const char* flag;
    int64_t* out;
  };
  for (Rate rate : {Rate{"cpu-rate", &config.rates.cpu_nano_per_gb_ms},
                    Rate{"gpu-rate", &config.rates.gpu_nano_per_ms}}) {
    const std::string& text = flags.Get(rate.flag);
    auto nano = core::ParseNanoDecimal(text);
    if (!nano) return Bad(rate.flag, text, "must be a non-negative decimal, at most 9 decimals");
    *rate.out = *nano;
  }
  const std::string& commission = flags.Get("commission-percent");
  auto nano = core::ParseNanoDecimal(commission);
  // Basis points: a percent with at most two decimals, 0 to 100.
  if (!nano || *nano % (kNano / 100) != 0 || *nano > 100 * kNano) {
    return Bad("commission-percent", commission, "must be a percent from 0 to 100, 2 decimals");
  }
  config.rates.commission_bp = *nano / (kNano / 100);

  struct Count {
    const char* flag;
    int64_t* out;
  };
  int64_t batch = 0;
  int64_t retention_hours = 0;
  for (Count c :
       {Count{"rate-limit-per-key", &config.limits.rate_per_key_per_s},
        Count{"rate-limit-burst", &config.limits.rate_burst},
        Count{"concurrency-per-org", &config.limits.concurrency_per_org},
        Count{"uncharged-timeout-s-per-hour", &config.limits.uncharged_timeout_s_per_hour},
        Count{"async-queue-per-org", &config.limits.queued_per_org},
        Count{"async-max-queued-ms", &config.async_max_queued_ms},
        Count{"execution-retention-hours", &retention_hours},
        Count{"async-stream-replicas", &config.async_stream_replicas},
        Count{"hold-grace-ms", &config.hold_grace_ms},
        Count{"reaper-interval-ms", &config.reaper_interval_ms},
        Count{"reconcile-check-interval-ms", &config.reconcile_check_interval_ms},
        Count{"ledger-identity-interval-ms", &config.ledger_identity_interval_ms},
        Count{"settle-batch", &batch}, Count{"settle-ack-linger-ms", &config.ack_linger_ms}}) {
    const std::string& text = flags.Get(c.flag);
    auto value = ParseCount(text);
    if (!value) return Bad(c.flag, text, "must be a non-negative integer");
    *c.out = *value;
  }
  if (config.limits.rate_per_key_per_s > 0 && config.limits.rate_burst < 1) {
    return Bad("rate-limit-burst", flags.Get("rate-limit-burst"),
               "must be at least 1 while a rate limit is set");
  }
  if (config.limits.uncharged_timeout_s_per_hour > kMaxUnchargedTimeoutSPerHour) {
    // In milliseconds it must stay exact in the scripts' Lua numbers.
    return Bad("uncharged-timeout-s-per-hour", flags.Get("uncharged-timeout-s-per-hour"),
               "must be at most " + std::to_string(kMaxUnchargedTimeoutSPerHour));
  }
  if (config.reaper_interval_ms < 1) {
    return Bad("reaper-interval-ms", flags.Get("reaper-interval-ms"), "must be at least 1");
  }
  if (config.ack_linger_ms > 1000) {
    // The executor sends a result again after 5 s without an ack: a linger must stay well inside.
    return Bad("settle-ack-linger-ms", flags.Get("settle-ack-linger-ms"), "must be at most 1000");
  }
  if (batch < 1) return Bad("settle-batch", flags.Get("settle-batch"), "must be at least 1");
  if (retention_hours < 24 || retention_hours > 24 * 366) {
    return Bad("execution-retention-hours", flags.Get("execution-retention-hours"),
               "must be from 24 to 8784");
  }
  config.execution_retention_ms = retention_hours * 3600 * 1000;
  if (config.async_stream_replicas < 1 || config.async_stream_replicas > 5) {
    return Bad("async-stream-replicas", flags.Get("async-stream-replicas"), "must be 1 to 5");
  }
  if (config.async_max_queued_ms < 1000) {
    return Bad("async-max-queued-ms", flags.Get("async-max-queued-ms"), "must be at least 1000");
  }
  auto funding = ParseFundingMode(flags.Get("funding"));
  if (!funding) return Bad("funding", flags.Get("funding"), "must be grants, checkout or demo");
  config.funding = *funding;
  config.webhook_allow_private_targets = flags.GetBool("webhook-allow-private-targets");
  for (const char* flag : {"public-url", "stripe-api-base"}) {
    const std::string& url = flags.Get(flag);
    if (!url.empty() && url.rfind("https://", 0) != 0 && url.rfind("http://", 0) != 0) {
      return Bad(flag, url, "must be an http:// or https:// URL");
    }
  }
  for (const std::string& text : flags.GetList("egress-allow-cidr")) {
    auto cidr = core::Cidr::Parse(text);
    if (!cidr.ok()) return Bad("egress-allow-cidr", text, cidr.status().message());
    config.callback_targets.allowed_networks.push_back(*cidr);
  }
  for (const std::string& text : flags.GetList("egress-deny-addr")) {
    auto endpoint = DeniedEndpointOf(text);
    if (!endpoint) return Bad("egress-deny-addr", text, "must be address:port");
    config.callback_targets.denied_endpoints.push_back(std::move(*endpoint));
  }
  config.callback_targets.allow_http = true;
  config.callback_targets.allow_private_targets = false;
  config.public_url = flags.Get("public-url");
  config.stripe_api_base = flags.Get("stripe-api-base");
  if (config.stripe_api_base.empty()) {
    return Bad("stripe-api-base", "", "must be an http:// or https:// URL");
  }
  config.webhook_allow_private_targets = flags.GetBool("webhook-allow-private-targets");
  config.settle_batch = static_cast<size_t>(batch);
  return config;
}

}  // namespace toolgate::billing
