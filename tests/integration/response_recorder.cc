#include "response_recorder.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>

#include "toolgate/base/json_writer.h"
#include "toolgate/http_client/http_client.h"

namespace toolgate::testing {
namespace {

namespace fs = std::filesystem;

class Recorder {
 public:
  explicit Recorder(const fs::path& file) : out_(file, std::ios::app) {
    if (!out_) {
      std::fprintf(stderr, "integration harness: cannot append to %s\n", file.c_str());
      std::abort();
    }
  }

  void AddEdge(const std::string& base_url) {
    std::lock_guard<std::mutex> lock(mu_);
    edges_.insert(base_url);
  }

  void Record(const http::Exchange& e) {
    std::lock_guard<std::mutex> lock(mu_);
    std::string_view url = e.url;
    bool edge = false;
    std::string_view target = url;
    for (const std::string& base : edges_) {
      if (url.starts_with(base) && url.size() > base.size() && url[base.size()] == '/') {
        edge = true;
        target = url.substr(base.size());
        break;
      }
    }
    const size_t q = target.find('?');
    JsonWriter w;
    w.BeginObject()
        .Field("edge", edge)
        .Field("method", e.method)
        .Field("path", edge ? target.substr(0, q) : url)
        .Field("query", q == std::string_view::npos ? std::string_view() : target.substr(q + 1))
        .Field("status", e.response.status)
        .Field("content_type", e.response.Header("content-type"))
        .Field("body", e.response.body)
        .Field("request_content_type", e.request_content_type)
        .Field("request_body", e.request_body)
        .EndObject();
    out_ << w.Take() << '\n';
    out_.flush();
  }

 private:
  std::mutex mu_;
  std::set<std::string> edges_;  // guarded by mu_
  std::ofstream out_;            // guarded by mu_
};

// The test binary's own name: one file per binary, so concurrent suites never share one.
std::string BinaryName() {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? "it_" + std::to_string(::getpid()) : exe.filename().string();
}

Recorder* TheRecorder() {
  static Recorder* recorder = []() -> Recorder* {
    const char* dir = std::getenv("TOOLGATE_RECORD_RESPONSES");
    if (dir == nullptr || *dir == '\0') return nullptr;
    std::error_code ec;
    fs::create_directories(dir, ec);
    auto* r = new Recorder(fs::path(dir) / (BinaryName() + ".jsonl"));  // lives to the end
    http::SetExchangeObserver([r](const http::Exchange& e) { r->Record(e); });
    return r;
  }();
  return recorder;
}

}  // namespace

void RecordEdgeResponses(const std::string& base_url) {
  if (Recorder* r = TheRecorder()) r->AddEdge(base_url);
}

}  // namespace toolgate::testing
