// Demo seeding for `toolgate up --demo`, through the public management API only.
#pragma once

#include <filesystem>
#include <string>

#include "demo/catalogue.h"
#include "toolgate/base/status.h"

namespace toolgate::cli {

// Seeds (first run) or reuses (later runs; remembered in <data>/run/demo.json, 0600) a living
// marketplace: publisher organizations with the three public Lua samples (an echo, an MCP
// server, a priced tool declaring WEATHER_API_KEY) and the demo catalogue (demo/catalogue.h);
// caller organizations that add, run and rate tools; and the demo organization, which also
// holds a balance, a secret and an API key. Prints the URL, the key and working curl lines.
// services: where the demo's own services listen (the Forecast sample is published calling
// services.weather).
Status SeedDemo(const std::string& base_url, const std::filesystem::path& data_dir,
                const DemoServices& services);

}  // namespace toolgate::cli
