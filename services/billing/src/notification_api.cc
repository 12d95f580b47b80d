#include "toolgate/billing/notification_api.h"

#include <algorithm>
#include <utility>

#include "toolgate/base/json.h"
#include "toolgate/base/json_writer.h"
#include "toolgate/base/log.h"
#include "toolgate/base/time.h"
#include "toolgate/core/problem.h"
#include "toolgate/webhook/signature.h"

namespace toolgate::billing {
namespace {

v1::HttpResponse NoEndpoint() {
  return core::ProblemResponse(
      "not_found",
      "No notification endpoint is set; set one with PUT /api/v1/billing/notifications.");
}

std::string EventsRule() {
  std::string names;
  for (const std::string& type : NotificationEventTypes()) {
    if (!names.empty()) names += ", ";
    names += type;
  }
  return "must be a non-empty array of event types: " + names;
}

}  // namespace

std::variant<NotificationSettings, v1::Problem> ParseNotificationSettings(
    const std::string& body, const webhook::TargetPolicy& policy) {
  auto doc = ParseJson(body);
  simdjson::dom::object object;
  if (!doc.ok() || doc->root.get_object().get(object)) {
    return core::MakeProblem(
        "invalid_json", "Send a JSON object such as {\"url\": \"https://example.com/hooks\"}.");
  }
  NotificationSettings out;
  v1::Problem problem;
  auto fail = [&](std::string_view field, std::string_view message) {
    if (problem.code().empty()) {
      problem = core::ValidationProblem(field, message);
    } else {
      core::AddFieldError(&problem, field, message);
    }
  };
  if (GetString(object, "url", &out.url) != Field::kOk) fail("url", "must be a string");

  simdjson::dom::element events;
  if (object["events"].get(events) || events.is_null()) {
    out.events = NotificationEventTypes();
  } else {
    simdjson::dom::array list;
    bool valid = !events.get_array().get(list) && list.size() > 0;
    if (valid) {
      for (auto item : list) {
        std::string_view name;
        const auto& known = NotificationEventTypes();
        if (item.get_string().get(name) ||
            std::find(known.begin(), known.end(), name) == known.end()) {
          valid = false;
          break;
        }
        out.events.emplace_back(name);
      }
    }
    if (!valid) fail("events", EventsRule());
    std::sort(out.events.begin(), out.events.end());
    out.events.erase(std::unique(out.events.begin(), out.events.end()), out.events.end());
  }
  if (!problem.code().empty()) return problem;
  if (std::string why = webhook::UrlRefusal(out.url, policy); !why.empty()) {
    return core::MakeProblem("notification_url_refused", "The url " + why + ".");
  }
  return out;
}

std::string NotificationEndpointJson(const NotificationEndpoint& endpoint, bool with_secret) {
  JsonWriter w;
  w.BeginObject().Field("url", endpoint.url);
  w.Key("events").BeginArray();
  for (const std::string& e : endpoint.events) w.String(e);
  w.EndArray()
      .Field("created_at", FormatRfc3339(endpoint.created_at_ms))
      .Field("updated_at", FormatRfc3339(endpoint.updated_at_ms));
  if (with_secret) w.Field("secret", endpoint.secret);
  w.EndObject();
  return w.Take();
}

NotificationApi::NotificationApi(NotificationStore& store, NotificationEndpointCache& cache,
                                 webhook::Transport& transport, webhook::TargetPolicy policy,
                                 std::function<int64_t()> now_ms)
    : store_(store),
      cache_(cache),
      transport_(transport),
      policy_(policy),
      now_ms_(now_ms ? std::move(now_ms) : [] { return NowMs(); }) {}

void NotificationApi::AddRoutes(core::Router& router) {
  router.Add("GET", "/billing/notifications", [this](const core::Request& r) { return Get(r); });
  router.Add("PUT", "/billing/notifications", [this](const core::Request& r) { return Put(r); });
  router.Add("DELETE", "/billing/notifications",
             [this](const core::Request& r) { return Delete(r); });
  router.Add("POST", "/billing/notifications/rotate-secret",
             [this](const core::Request& r) { return RotateSecret(r); });
  router.Add("POST", "/billing/notifications/test",
             [this](const core::Request& r) { return Test(r); });
}

v1::HttpResponse NotificationApi::Get(const core::Request& request) {
  auto endpoint = store_.Get(request.principal().org_id());
  if (!endpoint.ok()) return core::Unavailable(endpoint.status());
  if (!endpoint->has_value()) return NoEndpoint();
  return core::JsonResponse(200, NotificationEndpointJson(**endpoint, /*with_secret=*/false));
}

v1::HttpResponse NotificationApi::Put(const core::Request& request) {
  auto parsed = ParseNotificationSettings(request.http.body(), policy_);
  if (auto* problem = std::get_if<v1::Problem>(&parsed)) {
    return core::ProblemResponse(std::move(*problem));
  }
  const auto& settings = std::get<NotificationSettings>(parsed);
  const std::string& org = request.principal().org_id();
  // Used only when the endpoint is new; a replaced one keeps its secret.
  auto stored = store_.Put(org, settings.url, settings.events, webhook::NewSecret());
  // Dropped even on a failure: the write may have committed and only its answer been lost.
  cache_.Invalidate(org);
  if (!stored.ok()) return core::Unavailable(stored.status());
  return core::JsonResponse(stored->created ? 201 : 200,
                            NotificationEndpointJson(stored->endpoint, stored->created));
}

v1::HttpResponse NotificationApi::Delete(const core::Request& request) {
  const std::string& org = request.principal().org_id();
  auto deleted = store_.Delete(org);
  cache_.Invalidate(org);
  if (!deleted.ok()) return core::Unavailable(deleted.status());
  if (!*deleted) return NoEndpoint();
  return core::NoContent();
}

v1::HttpResponse NotificationApi::RotateSecret(const core::Request& request) {
  const std::string& org = request.principal().org_id();
  auto rotated = store_.RotateSecret(org, webhook::NewSecret());
  cache_.Invalidate(org);
  if (!rotated.ok()) return core::Unavailable(rotated.status());
  if (!rotated->has_value()) return NoEndpoint();
  log::Info("notification secret rotated").Str("org_id", org);
  return core::JsonResponse(200, NotificationEndpointJson(**rotated, /*with_secret=*/true));
}

v1::HttpResponse NotificationApi::Test(const core::Request& request) {
  const std::string& org = request.principal().org_id();
  auto endpoint = store_.Get(org);
  if (!endpoint.ok()) return core::Unavailable(endpoint.status());
  if (!endpoint->has_value()) return NoEndpoint();
  auto key = webhook::SigningKey((*endpoint)->secret);
  if (!key) return core::Unavailable(Status::Internal("stored notification secret is malformed"));
  const int64_t now = now_ms_();
  JsonWriter body;
  body.BeginObject()
      .Field("type", kTestEvent)
      .Field("timestamp", FormatRfc3339Millis(now))
      .Key("data")
      .BeginObject()
      .Field("organization_id", org)
      .EndObject()
      .EndObject();
  const webhook::Request message{(*endpoint)->url, webhook::NewMessageId(), body.Take(),
                                 std::move(*key)};
  // One attempt while the caller waits: the answer is what the endpoint did.
  const webhook::AttemptResult result = transport_.Attempt(message, now / 1000);
  const bool delivered = result.outcome == webhook::AttemptOutcome::kDelivered;
  JsonWriter w;
  w.BeginObject().Field("webhook_id", message.message_id).Field("delivered", delivered);
  w.Key("status_code");
  if (result.status != 0) {
    w.Int(result.status);
  } else {
    w.Null();
  }
  w.Key("error");
  if (delivered) {
    w.Null();
  } else {
    w.String(result.error);
  }
  w.EndObject();
  return core::JsonResponse(200, w.Take());
}

}  // namespace toolgate::billing
