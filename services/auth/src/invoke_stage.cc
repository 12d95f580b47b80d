#include "toolgate/auth/invoke_stage.h"

#include "toolgate/base/log.h"
#include "toolgate/base/time.h"
#include "toolgate/core/invoke_stage.h"
#include "toolgate/core/problem.h"

namespace toolgate::auth {

Status InvokeStage::Start() {
  return service_.HandleInline(kInvokeAuthSubject, "auth",
                               [this](bus::Message&& m) { OnJob(std::move(m)); });
}

void InvokeStage::OnJob(bus::Message&& m) {
  v1::InvokeJob job;
  if (!job.ParseFromString(m.data)) {
    log::Error("malformed invoke job dropped").Str("subject", m.subject);
    return;
  }
  // The NATS header is authoritative; the field is the copy kept for hops without headers.
  auto span = std::make_shared<trace::Span>(
      trace::ContinueOrStart(m.traceparent.empty() ? job.traceparent() : m.traceparent), "auth");
  core::AnnotateStageSpan(*span, job);
  if (job.edge_reply().empty()) job.set_edge_reply(m.reply);

  if (job.api_key_sha256().empty() && !job.session_token_sha256().empty()) {
    service_.pool().Submit(
        [this, job = std::move(job), span]() mutable { DecideSession(job, span); });
    return;
  }
  if (job.api_key_sha256().empty()) {
    Reject(job,
           core::MakeProblem("missing_api_key", "Send your API key in the Authorization header."),
           span);
    return;
  }
  if (auto cached = keys_.Cached(job.api_key_sha256())) {
    Decide(job, &*cached, span);
    return;
  }
  if (keys_.KnownUnknown(job.api_key_sha256())) {
    Decide(job, nullptr, span);
    return;
  }
  service_.pool().Submit([this, job = std::move(job), span]() mutable {
    auto loaded = keys_.Load(job.api_key_sha256());
    if (!loaded.ok()) {
      log::Error("key lookup failed").Str("error", loaded.status().ToString());
      Reject(job,
             core::MakeProblem("service_unavailable",
                               "A backing store is unavailable; retry shortly."),
             span);
      return;
    }
    Decide(job, loaded->has_value() ? &**loaded : nullptr, span);
  });
}

void InvokeStage::Decide(v1::InvokeJob& job, const KeyRecord* record, const SharedSpan& span) {
  int64_t now_ms = NowMs();
  if (auto problem = CheckKeyForInvoke(record, now_ms)) {
    Reject(job, std::move(*problem), span, record != nullptr ? record->expires_at_ms : 0);
    return;
  }
  usage_.Record(record->key_id, now_ms);
  Forward(job, PrincipalForKey(*record), span);
}

void InvokeStage::DecideSession(v1::InvokeJob& job, const SharedSpan& span) {
  auto found = accounts_.FindSession(job.session_token_sha256());
  if (!found.ok()) {
    log::Error("session lookup failed").Str("error", found.status().ToString());
    Reject(
        job,
        core::MakeProblem("service_unavailable", "A backing store is unavailable; retry shortly."),
        span);
    return;
  }
  if (!found->has_value()) {
    Reject(job, core::MakeProblem("not_authenticated", "Your session has ended; sign in again."),
           span);
    return;
  }
  // Later stages need only the principal; the token's hash goes no further than auth.
  job.clear_session_token_sha256();
  Forward(job, std::move(**found), span);
}

void InvokeStage::Forward(v1::InvokeJob& job, v1::Principal principal, const SharedSpan& span) {
  *job.mutable_principal() = std::move(principal);
  const std::string traceparent = span->traceparent();
  job.set_traceparent(traceparent);
  core::RecordHop(job, *span);
  Status s = service_.bus().Publish(kInvokeRegistrySubject, job.SerializeAsString(),
                                    job.edge_reply(), traceparent);
  if (!s.ok()) {
    log::Error("invoke job not forwarded").Str("error", s.ToString());
    Reject(job, core::MakeProblem("service_unavailable", "The bus is unavailable; retry shortly."),
           span);
  }
}

void InvokeStage::Reject(const v1::InvokeJob& job, v1::Problem problem, const SharedSpan& span,
                         int64_t key_expires_at_ms) {
  if (job.edge_reply().empty()) {
    log::Warn("invoke job without a reply subject dropped").Str("code", problem.code());
    return;
  }
  v1::InvokeReply reply;
  reply.set_key_expires_at_ms(key_expires_at_ms);
  *reply.mutable_problem() = std::move(problem);
  Status s =
      service_.bus().Publish(job.edge_reply(), reply.SerializeAsString(), {}, span->traceparent());
  if (!s.ok()) log::Warn("invoke rejection not sent").Str("error", s.ToString());
}

}  // namespace toolgate::auth
