#include "toolgate/core/chain_stage.h"

#include <map>

#include "toolgate/base/log.h"
#include "toolgate/core/invoke_stage.h"
#include "toolgate/core/problem.h"

namespace toolgate::core {

std::optional<StageJob> ChainStage::Open(const bus::Message& m) const {
  auto in = OpenInvokeJob(m);
  if (!in) return std::nullopt;
  StageJob out;
  out.span = std::make_unique<trace::Span>(StageTrace(m, in->job), span_name_);
  AnnotateStageSpan(*out.span, in->job);
  out.job = std::move(in->job);
  out.reply = std::move(in->reply);
  return out;
}

void ChainStage::Outbox::Forward(StageJob& job, const std::string& subject,
                                 const std::string& reply, std::function<void()> on_failure) {
  const std::string traceparent = job.span->traceparent();
  job.job.set_traceparent(traceparent);
  if (job.job.edge_reply().empty()) job.job.set_edge_reply(job.reply);
  RecordHop(job.job, *job.span);
  Forwarded f;
  f.subject = subject;
  f.message = bus::Outgoing(subject, job.job.SerializeAsString(), reply.empty() ? job.reply : reply,
                            traceparent);
  f.on_failure = std::move(on_failure);
  f.edge_reply = job.reply;
  f.key_expires_at_ms = job.job.principal().key_expires_at_ms();
  forwards_.push_back(std::move(f));
}

void ChainStage::Outbox::Reject(const StageJob& job, v1::Problem problem) {
  Answer(job.reply, job.job.principal().key_expires_at_ms(), job.span->traceparent(),
         std::move(problem));
}

void ChainStage::Outbox::Answer(const std::string& edge_reply, int64_t key_expires_at_ms,
                                const std::string& traceparent, v1::Problem problem) {
  v1::InvokeReply answer;
  answer.set_key_expires_at_ms(key_expires_at_ms);
  *answer.mutable_problem() = std::move(problem);
  answers_.emplace_back(edge_reply, answer.SerializeAsString(), "", traceparent);
}

void ChainStage::Outbox::Estimated(const StageJob& job, v1::Estimate estimate) {
  v1::InvokeReply answer;
  answer.set_key_expires_at_ms(job.job.principal().key_expires_at_ms());
  *answer.mutable_estimate() = std::move(estimate);
  answers_.emplace_back(job.reply, answer.SerializeAsString(), "", job.span->traceparent());
}

void ChainStage::Outbox::Reply(const StageJob& job, v1::InvokeReply reply) {
  reply.set_key_expires_at_ms(job.job.principal().key_expires_at_ms());
  answers_.emplace_back(job.reply, reply.SerializeAsString(), "", job.span->traceparent());
}

void ChainStage::Outbox::Send() {
  // One message per subject; a group that cannot be sent is answered 503 whole (a batch is at
  // most 256 jobs, one envelope, so it left whole or not at all).
  std::map<std::string, std::vector<Forwarded*>> by_subject;
  for (Forwarded& f : forwards_) by_subject[f.subject].push_back(&f);
  for (auto& [subject, group] : by_subject) {
    std::vector<bus::Outgoing> messages;
    messages.reserve(group.size());
    for (Forwarded* f : group) messages.push_back(f->message);
    Status sent = stage_.publish_(subject, std::move(messages));
    if (sent.ok()) continue;
    log::Error("cannot forward invoke jobs")
        .Str("subject", subject)
        .Int("count", static_cast<int64_t>(group.size()))
        .Str("error", sent.ToString());
    for (Forwarded* f : group) {
      if (f->on_failure) f->on_failure();
      Answer(f->edge_reply, f->key_expires_at_ms, f->message.traceparent,
             MakeProblem("service_unavailable", "The bus is unavailable; retry shortly."));
    }
  }
  forwards_.clear();
  std::map<std::string, std::vector<bus::Outgoing>> by_edge;
  for (bus::Outgoing& a : answers_)
    by_edge[bus::SiblingDestination(a.subject)].push_back(std::move(a));
  answers_.clear();
  for (auto& [destination, messages] : by_edge) {
    Status sent = stage_.publish_(destination, std::move(messages));
    if (!sent.ok()) log::Warn("cannot answer the edge").Str("error", sent.ToString());
  }
}

void ChainStage::Handle(const bus::Message& m, const Decide& decide) const {
  auto job = Open(m);
  if (!job) return;
  Outbox out = NewOutbox();
  StageVerdict verdict = decide(job->job);
  if (verdict.problem) {
    out.Reject(*job, std::move(*verdict.problem));
  } else {
    out.Forward(*job, verdict.next_subject, verdict.next_reply);
  }
  out.Send();
}

ChainStage::Publish PublishWith(bus::Bus& bus) {
  return [&bus](std::string_view destination, std::vector<bus::Outgoing> messages) {
    return bus.PublishBatch(destination, std::move(messages));
  };
}

}  // namespace toolgate::core
