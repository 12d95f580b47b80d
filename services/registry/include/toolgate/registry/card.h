// A marketplace card: what every list of the marketplace shows of one function.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "toolgate/registry/marketplace_query.h"

namespace toolgate::registry {

struct Card {
  std::string function_id;
  std::string name;
  std::string description;
  std::string org_id;
  std::string org_name;
  std::string category;
  std::string sector;
  std::vector<std::string> tags;
  std::string runtime;              // of the latest version; "" while none is published
  std::string compute_type;         // likewise
  std::vector<std::string> egress;  // the latest version's, as published; [] while none
  int64_t price_micro_usd = 0;
  int64_t rating_sum = 0;
  int64_t rating_count = 0;
  int64_t executions = 0;
  bool mcp = false;
  bool favorite = false;  // of the user who asked; false without one
};

// One page of cards and the position after its last card (nullopt on the last page).
struct CardPage {
  std::vector<Card> cards;
  std::optional<Position> next;
  int64_t total = 0;  // every match, all pages together (marketplace searches only)
};

}  // namespace toolgate::registry
