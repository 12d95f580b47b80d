// gpu_check: drives one GPU invocation through a real `toolgate-executor --pool gpu` on a
// machine with an NVIDIA GPU, playing the registry (code) and billing (settlement) on NATS, so
// the check needs no PostgreSQL or Redis there. Prints the execution result as JSON; exits 0
// when the handler answered 200 from a CUDA device.
//
//   gpu_check NATS_URL HANDLER.py [EVENT_JSON]
#include <condition_variable>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <sstream>

#include "toolgate/base/crypto.h"
#include "toolgate/base/json_writer.h"
#include "toolgate/bus/bus.h"
#include "toolgate/v1/toolgate.pb.h"

using namespace toolgate;

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: gpu_check NATS_URL HANDLER.py [EVENT_JSON]\n");
    return 2;
  }
  InitCrypto();
  std::ifstream in(argv[2]);
  std::stringstream code;
  code << in.rdbuf();
  bus::BusOptions options;
  options.url = argv[1];
  options.name = "gpu-check";
  auto bus = bus::Bus::Connect(options);
  if (!bus.ok()) {
    std::fprintf(stderr, "nats: %s\n", bus.status().ToString().c_str());
    return 1;
  }
  const std::string execution_id = NewUuid();
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  v1::ExecutionResult result;

  (*bus)->Subscribe("tg.registry.code", "", [&](bus::Message&& m) {
    v1::CodeReply reply;
    reply.set_found(true);
    reply.set_code(code.str());
    (*bus)->Publish(m.reply, reply.SerializeAsString());
  });
  const std::string settle = "tg.billing.settle." + execution_id;
  (*bus)->Subscribe(settle, "", [&](bus::Message&& m) {
    if (m.no_responders) {
      std::fprintf(stderr, "no GPU executor is subscribed to tg.exec.gpu.python\n");
      std::exit(1);
    }
    v1::SettleAck ack;
    ack.set_ok(true);
    if (!m.reply.empty()) (*bus)->Publish(m.reply, ack.SerializeAsString());
    std::lock_guard<std::mutex> lock(mu);
    if (!done) result.ParseFromString(m.data);
    done = true;
    cv.notify_all();
  });

  v1::InvokeJob job;
  job.set_request_id("gpu-check");
  job.set_execution_id(execution_id);
  job.set_function_id(NewUuid());
  job.set_event_json(argc > 3 ? argv[3] : R"({"n": 2048})");
  job.mutable_principal()->set_org_id("gpu-check-org");
  auto* fn = job.mutable_function();
  fn->set_function_id(job.function_id());
  fn->set_version("1.0.0");
  fn->set_runtime(v1::RUNTIME_PYTHON);
  fn->set_compute_type(v1::COMPUTE_TYPE_GPU);
  fn->set_timeout_ms(300000);
  fn->set_memory_mb(4096);
  Status s = (*bus)->Publish("tg.exec.gpu.python", job.SerializeAsString(), settle);
  if (!s.ok()) {
    std::fprintf(stderr, "publish: %s\n", s.ToString().c_str());
    return 1;
  }
  std::unique_lock<std::mutex> lock(mu);
  if (!cv.wait_for(lock, std::chrono::seconds(320), [&] { return done; })) {
    std::fprintf(stderr, "no result within 320 s\n");
    return 1;
  }
  JsonWriter w;
  w.BeginObject()
      .Field("handler_ran", result.handler_ran())
      .Field("status_code", result.status_code())
      .Field("body", result.body())
      .Field("runtime_ms", result.runtime_ms())
      .Field("memory_used_mb", result.memory_used_mb())
      .Field("compute_type", "GPU")
      .Field("problem", result.problem().code())
      .Field("logs", result.logs())
      .EndObject();
  std::printf("%s\n", w.str().c_str());
  bool cuda = result.body().find("cuda") != std::string::npos;
  return result.handler_ran() && result.status_code() == 200 && cuda ? 0 : 1;
}
