// The demo catalogue's organizations, and the loader of its tools (demo/tools/*).
#include "demo/catalogue.h"

#include <map>

#include "DemoToolFiles.h"
#include "toolgate/base/json.h"

namespace toolgate::cli {

const std::vector<DemoOrganization>& DemoPublishers() {
  static const std::vector<DemoOrganization> kPublishers = {
      {"Toolgate Samples", "samples@toolgate.local"},
      {"Northwind Analytics", "tools@northwind.example"},
      {"Helix Labs", "ml@helix.example"},
      {"Atlas Geo", "dev@atlasgeo.example"},
      {"Ledgerly", "api@ledgerly.example"},
  };
  return kPublishers;
}

const std::vector<DemoOrganization>& DemoCallers() {
  static const std::vector<DemoOrganization> kCallers = {
      {"Demo", "demo@toolgate.local"},
      {"Acme Retail", "ops@acme.example"},
      {"Globex Logistics", "platform@globex.example"},
  };
  return kCallers;
}

namespace {

Status Broken(const std::string& file, const std::string& why) {
  return Status::Internal("demo catalogue: " + file + ": " + why);
}

// demo.json: {"publisher": name, "sample"?: name, "runs": [n...], "ratings": [{stars, review?}]}
Status ReadDemoJson(const std::string& file, std::string_view text, DemoTool* tool) {
  auto doc = ParseJson(text);
  if (!doc.ok()) return Broken(file, doc.status().message());
  simdjson::dom::object obj;
  std::string publisher;
  if (doc->root.get_object().get(obj) != simdjson::SUCCESS ||
      GetString(obj, "publisher", &publisher) != Field::kOk) {
    return Broken(file, "needs a \"publisher\"");
  }
  const auto& publishers = DemoPublishers();
  tool->publisher = publishers.size();
  for (size_t i = 0; i < publishers.size(); ++i) {
    if (publishers[i].organization == publisher) tool->publisher = i;
  }
  if (tool->publisher == publishers.size()) return Broken(file, "no publisher " + publisher);
  GetString(obj, "sample", &tool->sample);
  simdjson::dom::array runs, ratings;
  if (obj["runs"].get_array().get(runs) != simdjson::SUCCESS ||
      obj["ratings"].get_array().get(ratings) != simdjson::SUCCESS) {
    return Broken(file, "needs \"runs\" and \"ratings\" arrays");
  }
  for (simdjson::dom::element r : runs) {
    int64_t n = 0;
    if (r.get_int64().get(n) != simdjson::SUCCESS || n < 0) return Broken(file, "bad run count");
    tool->runs.push_back(static_cast<int>(n));
  }
  for (simdjson::dom::element r : ratings) {
    simdjson::dom::object rating;
    int64_t stars = 0;
    if (r.get_object().get(rating) != simdjson::SUCCESS ||
        GetInt(rating, "stars", &stars) != Field::kOk || stars < 0 || stars > 5) {
      return Broken(file, "a rating needs \"stars\" 0..5");
    }
    DemoRating out;
    out.stars = static_cast<int>(stars);
    GetString(rating, "review", &out.review);
    tool->ratings.push_back(std::move(out));
  }
  return Status::Ok();
}

}  // namespace

Result<std::vector<DemoTool>> LoadDemoCatalogue() {
  // The files by directory, then by name within it.
  std::map<std::string, std::map<std::string, std::string_view>> dirs;
  for (const EmbeddedFile& f : DemoToolFiles()) {
    size_t slash = f.path.find('/');
    if (slash == std::string_view::npos) continue;
    dirs[std::string(f.path.substr(0, slash))][std::string(f.path.substr(slash + 1))] = f.text;
  }
  std::vector<DemoTool> tools;
  for (auto& [dir, files] : dirs) {
    DemoTool tool;
    tool.dir = dir;
    auto manifest = files.find("toolgate.json");
    if (manifest == files.end()) return Broken(dir, "no toolgate.json");
    std::vector<FieldError> errors = ParseManifest(manifest->second, &tool.manifest);
    if (!errors.empty()) {
      return Broken(dir + "/toolgate.json", errors[0].field + ": " + errors[0].message);
    }
    auto code = files.find(tool.manifest.handler);
    if (code == files.end()) return Broken(dir, "no handler file " + tool.manifest.handler);
    tool.code = std::string(code->second);
    if (tool.manifest.bundle) {
      for (const DemoBundle& b : DemoBundles()) {
        if (b.dir == dir) tool.bundle = std::string(b.bytes);
      }
      if (tool.bundle.empty()) return Broken(dir, "a bundle tool the build did not pack");
    }
    auto examples = ParseJson(tool.manifest.examples.value_or("[]"));
    simdjson::dom::element event;
    if (!examples.ok() || examples->root.at_pointer("/0/event").get(event) != simdjson::SUCCESS) {
      return Broken(dir + "/toolgate.json", "needs an example with an event");
    }
    tool.example = ToJson(event);
    auto demo = files.find("demo.json");
    if (demo == files.end()) return Broken(dir, "no demo.json");
    if (Status s = ReadDemoJson(dir + "/demo.json", demo->second, &tool); !s.ok()) return s;
    tools.push_back(std::move(tool));
  }
  return tools;
}

}  // namespace toolgate::cli
