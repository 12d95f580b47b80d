#include "toolgate/billing/grant_usage.h"

#include <gtest/gtest.h>

namespace toolgate::billing {
namespace {

std::string Request(const std::string& org, const std::vector<std::string>& ids) {
  v1::GrantUsageRequest request;
  request.set_org_id(org);
  for (const auto& id : ids) request.add_grant_ids(id);
  return request.SerializeAsString();
}

std::string CodeOf(const std::variant<GrantUsageQuery, v1::Problem>& parsed) {
  const auto* problem = std::get_if<v1::Problem>(&parsed);
  return problem ? problem->code() : "";
}

TEST(GrantUsageTest, ARequestNamesEachGrantOnceInLowerCase) {
  auto parsed = ParseGrantUsageRequest(Request(
      "org-a", {"5F0C2B7E-9A41-4D3C-8E2B-1A0F4C3D2E1F", "0b9d7c1e-8f3a-4e55-9d2a-6c1b2e3f4a5b",
                "5f0c2b7e-9a41-4d3c-8e2b-1a0f4c3d2e1f"}));
  ASSERT_EQ(CodeOf(parsed), "");
  const auto& query = std::get<GrantUsageQuery>(parsed);
  EXPECT_EQ(query.org_id, "org-a");
  EXPECT_EQ(query.grant_ids, (std::vector<std::string>{"0b9d7c1e-8f3a-4e55-9d2a-6c1b2e3f4a5b",
                                                       "5f0c2b7e-9a41-4d3c-8e2b-1a0f4c3d2e1f"}));
  auto none = ParseGrantUsageRequest(Request("org-a", {}));
  ASSERT_EQ(CodeOf(none), "");
  EXPECT_TRUE(std::get<GrantUsageQuery>(none).grant_ids.empty());
}

TEST(GrantUsageTest, BadRequestsAreRefusedAsSuch) {
  std::vector<std::string> ids(kMaxGrantUsageIds, "5f0c2b7e-9a41-4d3c-8e2b-1a0f4c3d2e1f");
  EXPECT_EQ(CodeOf(ParseGrantUsageRequest(Request("org-a", ids))), "");
  ids.push_back(ids.back());
  auto too_many = ParseGrantUsageRequest(Request("org-a", ids));
  EXPECT_EQ(CodeOf(too_many), "bad_request");
  EXPECT_EQ(std::get<v1::Problem>(too_many).status(), 400);

  auto not_uuid = ParseGrantUsageRequest(
      Request("org-a", {"5f0c2b7e-9a41-4d3c-8e2b-1a0f4c3d2e1f", "'; DROP TABLE billing"}));
  EXPECT_EQ(CodeOf(not_uuid), "bad_request");
  EXPECT_NE(std::get<v1::Problem>(not_uuid).detail().find("is not a UUID"), std::string::npos);

  EXPECT_EQ(CodeOf(ParseGrantUsageRequest(Request("", {}))), "bad_request");
  EXPECT_EQ(CodeOf(ParseGrantUsageRequest("\xff\xff\xff")), "bad_request");
}

}  // namespace
}  // namespace toolgate::billing
