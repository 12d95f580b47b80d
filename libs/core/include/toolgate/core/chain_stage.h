// ChainStage: the skeleton every stage of the invoke chain runs its jobs through.
//
// A stage's own code is its decision; everything around it is here, once:
//   - Open: parse the InvokeJob (a malformed one, or one with nowhere to answer, is logged and
//     dropped: it cannot be answered), find the edge's reply subject, open the stage's span as a
//     child of the job's trace;
//   - Outbox: collect what the jobs handled together send (forwards to the next stage, each with
//     its hop recorded and the span's traceparent; answers to the edges, each with the key's
//     expiry so that X-Api-Key-Expires-At comes with every answer), then send it as one message
//     per destination (Bus::PublishBatch). A forward that cannot be published is logged, its
//     on_failure runs (billing releases the hold) and its caller is answered 503;
//   - Handle: the whole path for a stage whose decision needs nothing but the job.
//
//   core::ChainStage stage("secrets", PublishWith(bus));
//   stage.Handle(message, [&](v1::InvokeJob& job) { return Decide(job); });
//
// Thread-safe: a ChainStage is immutable; an Outbox belongs to one thread.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "toolgate/base/status.h"
#include "toolgate/bus/bus.h"
#include "toolgate/trace/trace.h"
#include "toolgate/v1/toolgate.pb.h"

namespace toolgate::core {

// A stage's decision on one job: answer the edge with a problem, or send the job on.
struct StageVerdict {
  std::optional<v1::Problem> problem;  // set: the job goes no further
  std::string next_subject;            // otherwise: where it goes
  std::string next_reply;              // the NATS reply subject to send it with; "": the edge's

  static StageVerdict Forward(std::string subject, std::string reply = {}) {
    StageVerdict v;
    v.next_subject = std::move(subject);
    v.next_reply = std::move(reply);
    return v;
  }
  static StageVerdict Reject(v1::Problem problem) {
    StageVerdict v;
    v.problem = std::move(problem);
    return v;
  }
};

// One job in a stage's hands: its span ends when the StageJob is destroyed.
struct StageJob {
  v1::InvokeJob job;
  std::string reply;                  // the edge's reply subject
  std::unique_ptr<trace::Span> span;  // the stage's span
};

class ChainStage {
 public:
  // Sends the messages bound for one subscriber; production: PublishWith(bus).
  using Publish =
      std::function<Status(std::string_view destination, std::vector<bus::Outgoing> messages)>;
  // A stage's decision; it may fill its part of the job (principal, sealed env...).
  using Decide = std::function<StageVerdict(v1::InvokeJob& job)>;

  ChainStage(std::string span_name, Publish publish)
      : span_name_(std::move(span_name)), publish_(std::move(publish)) {}

  // The job of m with its span open, or nullopt (logged) when m cannot be answered.
  std::optional<StageJob> Open(const bus::Message& m) const;

  class Outbox {
   public:
    // Queues job for subject (reply: the NATS reply subject; "": the edge's), recording the
    // stage's hop and traceparent on it. on_failure runs if it cannot be published.
    void Forward(StageJob& job, const std::string& subject, const std::string& reply = {},
                 std::function<void()> on_failure = {});
    // Queues the edge's answer: problem, with the key's expiry.
    void Reject(const StageJob& job, v1::Problem problem);
    // The same for a job no longer at hand: its edge's reply subject, key expiry and trace.
    void Answer(const std::string& edge_reply, int64_t key_expires_at_ms,
                const std::string& traceparent, v1::Problem problem);
    // Queues the edge's answer to an estimate_only job: what its hold would be.
    void Estimated(const StageJob& job, v1::Estimate estimate);
    // Queues any other answer to the edge (an asynchronous call's acceptance, an idempotent
    // repeat's first answer), with the key's expiry set.
    void Reply(const StageJob& job, v1::InvokeReply reply);
    // Sends everything queued: forwards first (one message per subject), then answers (one per
    // edge). Empty afterwards.
    void Send();
    size_t size() const { return forwards_.size() + answers_.size(); }

   private:
    friend class ChainStage;
    explicit Outbox(const ChainStage& stage) : stage_(stage) {}
    struct Forwarded {
      std::string subject;
      bus::Outgoing message;
      std::function<void()> on_failure;
      std::string edge_reply;  // to answer 503 when the forward fails
      int64_t key_expires_at_ms = 0;
    };
    const ChainStage& stage_;
    std::vector<Forwarded> forwards_;
    std::vector<bus::Outgoing> answers_;
  };
  Outbox NewOutbox() const { return Outbox(*this); }

  // Open, decide, then forward or answer, and send: the whole path of a job for a stage whose
  // decision needs nothing but the job.
  void Handle(const bus::Message& m, const Decide& decide) const;

 private:
  std::string span_name_;
  Publish publish_;
};

// Bus::PublishBatch of bus, which must outlive the returned function.
ChainStage::Publish PublishWith(bus::Bus& bus);

}  // namespace toolgate::core
