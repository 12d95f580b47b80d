#include "toolgate/registry/mcp_listing.h"

#include <gtest/gtest.h>

namespace toolgate::registry {
namespace {

v1::McpListing Listing() {
  v1::McpListing l;
  l.set_tools_json(R"([{"name":"echo","inputSchema":{"type":"object"}}])");
  l.set_resources_json(R"([{"uri":"file:///a","name":"a"}])");
  l.set_resource_templates_json("[]");
  l.set_prompts_json("");  // the handler lists none
  return l;
}

// The field the refusal names, and its message; "" when the listing passes.
std::string Refusal(const v1::McpListing& listing) {
  auto problem = CheckMcpListing(listing);
  if (!problem) return "";
  EXPECT_EQ(problem->code(), "validation_failed");
  EXPECT_EQ(problem->errors_size(), 1);
  if (problem->errors_size() != 1) return "?";
  return problem->errors(0).field() + ": " + problem->errors(0).message();
}

// An array of n empty objects.
std::string ArrayOf(size_t n) {
  std::string out = "[";
  for (size_t i = 0; i < n; ++i) out += i ? ",{}" : "{}";
  return out + "]";
}

// An array of one object whose text is exactly bytes long.
std::string ArrayOfBytes(size_t bytes) {
  return R"([{"p":")" + std::string(bytes - 10, 'x') + R"("}])";
}

TEST(McpListing, ArraysAndEmptyStringsPass) {
  EXPECT_EQ(Refusal(Listing()), "");
  EXPECT_EQ(Refusal(v1::McpListing()), "");  // all four empty: nothing listed
}

TEST(McpListing, EachFieldMustBeAJsonArrayOfObjects) {
  v1::McpListing l = Listing();
  l.set_tools_json(R"({"tools":[]})");
  EXPECT_EQ(Refusal(l), "listing.tools_json: must be a JSON array");
  l = Listing();
  l.set_resources_json("[{]");
  EXPECT_NE(Refusal(l).find("listing.resources_json: is not JSON"), std::string::npos)
      << Refusal(l);
  l = Listing();
  l.set_resource_templates_json(R"([{}, "x"])");
  EXPECT_EQ(Refusal(l), "listing.resource_templates_json: entry 1 is not an object");
  l = Listing();
  l.set_prompts_json("null");
  EXPECT_EQ(Refusal(l), "listing.prompts_json: must be a JSON array");
}

TEST(McpListing, AtMost500EntriesEach) {
  v1::McpListing l = Listing();
  l.set_prompts_json(ArrayOf(kMaxMcpListingEntries));
  EXPECT_EQ(Refusal(l), "");
  l.set_prompts_json(ArrayOf(kMaxMcpListingEntries + 1));
  EXPECT_EQ(Refusal(l), "listing.prompts_json: has 501 entries; at most 500 are kept");
}

TEST(McpListing, AtMost256KiBEach) {
  v1::McpListing l = Listing();
  const std::string fits = ArrayOfBytes(kMaxMcpListingArrayBytes);
  ASSERT_EQ(fits.size(), kMaxMcpListingArrayBytes);
  l.set_tools_json(fits);
  EXPECT_EQ(Refusal(l), "");
  const std::string over = ArrayOfBytes(kMaxMcpListingArrayBytes + 1);
  ASSERT_EQ(over.size(), kMaxMcpListingArrayBytes + 1);
  l.set_tools_json(over);
  EXPECT_EQ(Refusal(l), "listing.tools_json: is 262145 bytes; at most 262144 are kept");
  // The bound is per array: four arrays just under it pass together.
  l.set_tools_json(fits);
  l.set_resources_json(fits);
  l.set_resource_templates_json(fits);
  l.set_prompts_json(fits);
  EXPECT_EQ(Refusal(l), "");
}

}  // namespace
}  // namespace toolgate::registry
