#include "toolgate/billing/notification_api.h"

#include <gtest/gtest.h>

namespace toolgate::billing {
namespace {

const webhook::TargetPolicy kDefault{};
const webhook::TargetPolicy kDevelopment{.allow_private_targets = true};

TEST(NotificationApiTest, AnUrlAloneSubscribesToEveryEvent) {
  auto parsed = ParseNotificationSettings(R"({"url":"https://hooks.example.com/tg"})", kDefault);
  ASSERT_TRUE(std::holds_alternative<NotificationSettings>(parsed));
  const auto& settings = std::get<NotificationSettings>(parsed);
  EXPECT_EQ(settings.url, "https://hooks.example.com/tg");
  EXPECT_EQ(settings.events, NotificationEventTypes());
}

TEST(NotificationApiTest, EventsAreKnownTypesWithoutRepeats) {
  auto parsed = ParseNotificationSettings(
      R"({"url":"https://h.example.com/","events":["budget.threshold_reached",)"
      R"("budget.threshold_reached"]})",
      kDefault);
  ASSERT_TRUE(std::holds_alternative<NotificationSettings>(parsed));
  EXPECT_EQ(std::get<NotificationSettings>(parsed).events,
            std::vector<std::string>{"budget.threshold_reached"});
  for (const char* body :
       {R"({"url":"https://h.example.com/","events":[]})",
        R"({"url":"https://h.example.com/","events":["invoice.paid"]})",
        R"({"url":"https://h.example.com/","events":"budget.threshold_reached"})",
        R"({"url":"https://h.example.com/","events":[1]})"}) {
    auto refused = ParseNotificationSettings(body, kDefault);
    ASSERT_TRUE(std::holds_alternative<v1::Problem>(refused)) << body;
    EXPECT_EQ(std::get<v1::Problem>(refused).code(), "validation_failed") << body;
  }
}

TEST(NotificationApiTest, MalformedBodiesAreRefusedClearly) {
  auto not_json = ParseNotificationSettings("{", kDefault);
  ASSERT_TRUE(std::holds_alternative<v1::Problem>(not_json));
  EXPECT_EQ(std::get<v1::Problem>(not_json).code(), "invalid_json");
  auto no_url = ParseNotificationSettings(R"({"events":["budget.threshold_reached"]})", kDefault);
  ASSERT_TRUE(std::holds_alternative<v1::Problem>(no_url));
  EXPECT_EQ(std::get<v1::Problem>(no_url).code(), "validation_failed");
}

TEST(NotificationApiTest, UrlsNobodyMayReachAreRefusedUnlessDevelopmentAllowsThem) {
  for (const char* url : {"http://hooks.example.com/", "https://127.0.0.1:9000/hook",
                          "https://10.0.0.7/", "https://169.254.169.254/latest/meta-data",
                          "https://[::1]/", "https://[::ffff:127.0.0.1]/"}) {
    const std::string body = std::string(R"({"url":")") + url + R"("})";
    auto refused = ParseNotificationSettings(body, kDefault);
    ASSERT_TRUE(std::holds_alternative<v1::Problem>(refused)) << url;
    const v1::Problem& problem = std::get<v1::Problem>(refused);
    EXPECT_EQ(problem.code(), "notification_url_refused") << url;
    EXPECT_EQ(problem.status(), 400) << url;
    EXPECT_TRUE(
        std::holds_alternative<NotificationSettings>(ParseNotificationSettings(body, kDevelopment)))
        << url;
  }
  auto loopback = ParseNotificationSettings(R"({"url":"https://127.0.0.1:9000/hook"})", kDefault);
  EXPECT_EQ(std::get<v1::Problem>(loopback).detail(),
            "The url must not name a host that is a loopback address.");
}

TEST(NotificationApiTest, TheEndpointIsShownWithoutItsSecretUnlessAsked) {
  NotificationEndpoint e;
  e.url = "https://h.example.com/";
  e.events = {"budget.threshold_reached"};
  e.secret = "whsec_c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0";
  e.created_at_ms = 0;
  e.updated_at_ms = 1000;
  EXPECT_EQ(NotificationEndpointJson(e, false),
            R"({"url":"https://h.example.com/","events":["budget.threshold_reached"],)"
            R"("created_at":"1970-01-01T00:00:00Z","updated_at":"1970-01-01T00:00:01Z"})");
  EXPECT_NE(NotificationEndpointJson(e, true).find(R"("secret":"whsec_)"), std::string::npos);
}

}  // namespace
}  // namespace toolgate::billing
