// The demo marketplace: tools from several publisher organizations, across categories, sectors,
// runtimes and both compute types, free and paid, that `toolgate up --demo` publishes so a first
// look shows a living catalogue.
//
// The tools are data: one directory each under cli/toolgate/demo/tools, holding the same
// toolgate.json and handler file that `toolgate publish DIR` reads (and publishes through the
// same request bodies), plus demo.json with what only the demo needs: the publishing
// organization, and per demo caller how often it runs the tool and how it rates it. The files
// are compiled into the binary (toolgate_embed_tree), so `toolgate up --demo` needs no path.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "commands.h"
#include "toolgate/base/status.h"

namespace toolgate::cli {

// An organization of the demo, and the email of its user.
struct DemoOrganization {
  std::string_view organization;
  std::string_view email;
};

// What one caller thinks of a tool: stars 0 means it does not rate it.
struct DemoRating {
  int stars = 0;
  std::string review;
};

struct DemoTool {
  std::string dir;       // its directory under demo/tools
  size_t publisher = 0;  // index into DemoPublishers()
  // "echo", "mcp" or "forecast" for the three sample tools whose curl lines `--demo` prints.
  std::string sample;
  Manifest manifest;    // its toolgate.json
  std::string code;     // its handler file
  std::string example;  // the event of its first example, JSON
  // Per demo caller, in DemoCallers() order: how often it runs the tool while seeding (Lua CPU
  // tools only, so that seeding needs no other executor pool), and its rating (a caller rates
  // only what it ran).
  std::vector<int> runs;
  std::vector<DemoRating> ratings;
};

const std::vector<DemoOrganization>& DemoPublishers();

// The organizations that use the catalogue: they add, run and rate tools. The first is the
// demo organization whose key `toolgate up --demo` prints.
const std::vector<DemoOrganization>& DemoCallers();

// Every tool of the catalogue, in directory order. Internal naming the file and the problem when
// a tool's files are incomplete or malformed (a build of a broken catalogue fails its tests).
Result<std::vector<DemoTool>> LoadDemoCatalogue();

}  // namespace toolgate::cli
