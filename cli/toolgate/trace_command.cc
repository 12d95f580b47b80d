#include "trace_command.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "toolgate/base/json.h"
#include "toolgate/base/time.h"

namespace fs = std::filesystem;

namespace toolgate::cli {
namespace {

struct SpanLine {
  int64_t end_ms = 0;  // the line is written when the span ends
  int64_t duration_us = 0;
  std::string service, name, span_id, parent;
};

}  // namespace

int RunTrace(const std::vector<std::string>& args) {
  std::string trace_id, data_dir = "./data";
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--data-dir" && i + 1 < args.size()) {
      data_dir = args[++i];
    } else if (trace_id.empty() && args[i].rfind("--", 0) != 0) {
      trace_id = args[i];
    } else {
      std::fprintf(stderr, "usage: toolgate trace TRACE_ID [--data-dir DIR]\n");
      return 2;
    }
  }
  if (trace_id.size() != 32) {
    std::fprintf(stderr, "usage: toolgate trace TRACE_ID [--data-dir DIR] (32 hex digits)\n");
    return 2;
  }
  std::vector<SpanLine> spans;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(fs::path(data_dir) / "logs", ec)) {
    std::ifstream in(entry.path());
    std::string line;
    while (std::getline(in, line)) {
      if (line.find(trace_id) == std::string::npos) continue;
      auto doc = ParseJson(line);
      simdjson::dom::object obj;
      std::string msg, ts, tid;
      if (!doc.ok() || doc->root.get_object().get(obj) ||
          GetString(obj, "msg", &msg) != Field::kOk || msg != "span" ||
          GetString(obj, "trace_id", &tid) != Field::kOk || tid != trace_id) {
        continue;
      }
      SpanLine s;
      GetString(obj, "ts", &ts);
      s.end_ms = ParseRfc3339(ts).value_or(0);
      GetInt(obj, "duration_us", &s.duration_us);
      GetString(obj, "service", &s.service);
      GetString(obj, "name", &s.name);
      GetString(obj, "span_id", &s.span_id);
      GetString(obj, "parent_span_id", &s.parent);
      spans.push_back(std::move(s));
    }
  }
  if (ec || spans.empty()) {
    std::fprintf(stderr, "no spans of trace %s under %s/logs\n", trace_id.c_str(),
                 data_dir.c_str());
    return 1;
  }
  // Start = end - duration; the edge's span encloses the others.
  std::sort(spans.begin(), spans.end(), [](const SpanLine& a, const SpanLine& b) {
    return a.end_ms * 1000 - a.duration_us < b.end_ms * 1000 - b.duration_us;
  });
  std::printf("%-10s %-18s %12s  %-16s %-16s\n", "service", "span", "duration_us", "span_id",
              "parent");
  for (const auto& s : spans) {
    std::printf("%-10s %-18s %12lld  %-16s %-16s\n", s.service.c_str(), s.name.c_str(),
                static_cast<long long>(s.duration_us), s.span_id.c_str(), s.parent.c_str());
  }
  return 0;
}

}  // namespace toolgate::cli
