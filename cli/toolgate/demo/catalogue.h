// The demo marketplace: tools from several publisher organizations, across categories, sectors,
// runtimes and both compute types, free and paid, that `toolgate up --demo` publishes beside
// the three sample tools so a first look shows a living catalogue.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace toolgate::cli {

// An organization of the demo, and the email of its user.
struct DemoOrganization {
  std::string_view organization;
  std::string_view email;
};

// What one caller thinks of a tool: stars 0 means it does not rate it.
struct DemoRating {
  int stars;
  std::string_view review;
};

struct DemoTool {
  int publisher;  // index into DemoPublishers()
  std::string_view name;
  std::string_view description;
  std::string_view overview;  // Markdown
  std::string_view category;
  std::string_view sector;
  std::vector<std::string_view> tags;
  int64_t price_micro_usd;
  bool mcp;
  std::string_view runtime;       // "lua", "python" or "javascript"
  std::string_view compute_type;  // "CPU", or "GPU" (Python only)
  std::string_view code;
  std::string_view example;  // the example event, JSON
  // Per demo caller, in DemoCallers() order: how often it runs the tool while seeding (Lua CPU
  // tools only, so that seeding needs no other executor pool), and its rating (a caller rates
  // only what it ran).
  std::vector<int> runs;
  std::vector<DemoRating> ratings;
};

const std::vector<DemoOrganization>& DemoPublishers();
const std::vector<DemoTool>& DemoCatalogue();

// The organizations that use the catalogue: they add, run and rate tools. The first is the
// demo organization whose key `toolgate up --demo` prints.
const std::vector<DemoOrganization>& DemoCallers();

}  // namespace toolgate::cli
