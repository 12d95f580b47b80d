// The billing service's configuration: charging rates and invocation limits (contract sections
// 4 and 5), from flags or TOOLGATE_* variables.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "toolgate/base/flags.h"
#include "toolgate/base/status.h"
#include "toolgate/billing/funding.h"
#include "toolgate/core/cost.h"
#include "toolgate/webhook/target_policy.h"

namespace toolgate::billing {

// Per-key request rate, per-organization concurrency and per-organization allowance of
// uncharged timeouts; 0 turns a limit off.
struct Limits {
  int64_t rate_per_key_per_s = 1000;
  int64_t rate_burst = 2000;
  int64_t concurrency_per_org = 100;
  // Sandbox seconds an organization's calls may spend per hour running past their timeout_ms
  // (408, not charged). Once spent, its calls are refused (429 timeout_budget_exhausted) until
  // the allowance refills at this many seconds per hour: a handler that spins until it is
  // killed would otherwise be free compute. The default lets an organization keep one sandbox
  // timing out all the time, which no tool that usually finishes comes near.
  int64_t uncharged_timeout_s_per_hour = 3600;
  // Asynchronous executions an organization may have waiting in the queue (held, not yet
  // started); beyond it an asynchronous call is refused 429 queue_full. 0: no limit.
  int64_t queued_per_org = 1000;
};

struct Config {
  core::Rates rates;
  Limits limits;
  // A hold is presumed abandoned this long after its function's timeout (executor lost, result
  // never delivered); the reaper then settles or releases it.
  int64_t hold_grace_ms = 60'000;
  int64_t reaper_interval_ms = 5'000;
  // Asynchronous executions (async_executions.h): how long one may wait in the queue before it
  // ends failed (queue_timeout) uncharged, how long a finished one stays readable (and an
  // Idempotency-Key's first answer, at most 24 hours, is replayed), and the replicas of the
  // JetStream stream that holds the queue (1: one nats-server; 3 for a cluster).
  int64_t async_max_queued_ms = 24LL * 3600 * 1000;
  int64_t execution_retention_ms = 7LL * 24 * 3600 * 1000;
  int64_t async_stream_replicas = 1;
  // How often balances are compared with the ledger for the reconciliation metrics; 0: never.
  int64_t reconcile_check_interval_ms = 60'000;
  // How often the whole-ledger identity is checked for its metric (ledger_identity.h); 0: never.
  int64_t ledger_identity_interval_ms = 300'000;
  // Settlements written in one PostgreSQL transaction at most (group commit), and holds placed
  // in one pipelined Redis round trip at most.
  size_t settle_batch = 256;
  // How long the acks of settled results may gather before they leave in one message per
  // executor connection (0: each batch's acks at once). An ack is off the answer path: it only
  // stops the executor's retry, which waits 5 s, so under load a message every linger replaces
  // one per settlement batch. They leave at once, linger or not, once the results they ack
  // reach 8 MiB (Settler::kAckLingerBytes), so an executor never keeps more than that of acked
  // results waiting.
  int64_t ack_linger_ms = 20;
  // Where credit comes from (funding.h); members top up only in demo.
  FundingMode funding = FundingMode::kGrants;
  // Notification webhooks may go to http URLs and to loopback, private, link-local and other
  // non-public addresses (--webhook-allow-private-targets): development and tests only
  // (webhook/target_policy.h).
  bool webhook_allow_private_targets = false;
  // Checkout funding: the web app's public URL the payer returns to (empty: the edge's), and
  // the payment provider's API (a stand-in's in tests). The provider's secrets are read from
  // their files (--stripe-secret-key-file, --stripe-webhook-secret-file) at start-up only.
  std::string public_url;
  std::string stripe_api_base = "https://api.stripe.com";
  // Where asynchronous calls' callbacks may go: the operator's egress rules for tools
  // (--egress-allow-cidr networks although not public; never the platform's own endpoints,
  // --egress-deny-addr, which `toolgate up` passes), http or https.
  webhook::TargetPolicy callback_targets;
};

// Defines the charging flags (core/charging_flags.h: --cpu-rate, --gpu-rate, --commission-percent,
// --rate-limit-per-key, --rate-limit-burst, --concurrency-per-org, --uncharged-timeout-s-per-hour)
// and --hold-grace-ms, --reaper-interval-ms, --reconcile-check-interval-ms,
// --ledger-identity-interval-ms, --settle-batch,
// --settle-ack-linger-ms, --async-queue-per-org, --async-max-queued-ms,
// --execution-retention-hours, --async-stream-replicas, --funding, the egress flags callbacks
// follow (--no-egress, --egress-allow-cidr, --egress-deny-cidr, --egress-deny-addr), and checkout
// funding's --public-url, --stripe-api-base,
// --stripe-secret-key-file and --stripe-webhook-secret-file.
void DefineBillingFlags(Flags& flags);

// Reads the flags defined above. InvalidArgument names the first bad flag and why, for a one-line
// start-up failure.
Result<Config> ConfigFromFlags(const Flags& flags);

}  // namespace toolgate::billing
