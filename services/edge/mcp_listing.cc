#include "mcp_listing.h"

#include <array>
#include <memory>
#include <mutex>
#include <vector>

#include "mcp_workspace.h"
#include "toolgate/base/crypto.h"
#include "toolgate/base/json.h"
#include "toolgate/base/json_writer.h"
#include "toolgate/base/log.h"

namespace toolgate::edge {
namespace {

struct ListMethod {
  std::string_view method;  // the JSON-RPC method
  std::string_view member;  // the array its result holds
};
constexpr std::array<ListMethod, 4> kListMethods = {
    {{"tools/list", "tools"},
     {"resources/list", "resources"},
     {"resources/templates/list", "resourceTemplates"},
     {"prompts/list", "prompts"}}};

// One Fill in progress: each method's items so far, and how many methods are still listing.
struct Listing {
  std::mutex mu;
  std::array<std::vector<std::string>, kListMethods.size()> items;  // guarded by mu
  size_t pending = kListMethods.size();                             // guarded by mu
  bool failed = false;                                              // guarded by mu
};

std::string ListRequest(std::string_view method, const std::string& cursor) {
  JsonWriter w;
  w.BeginObject().Field("jsonrpc", "2.0").Field("id", "toolgate-listing");
  w.Field("method", method).Key("params").BeginObject();
  if (!cursor.empty()) w.Field("cursor", cursor);
  return w.EndObject().EndObject().Take();
}

std::string ArrayOf(const std::vector<std::string>& items) {
  JsonWriter w;
  w.BeginArray();
  for (const std::string& item : items) w.Raw(item);
  return w.EndArray().Take();
}

// Whether body is the JSON-RPC error -32601 (the handler does not serve the method).
bool IsMethodNotFound(std::string_view body) {
  auto doc = ParseJson(body);
  simdjson::dom::object obj, error;
  int64_t code = 0;
  return doc.ok() && doc->root.get_object().get(obj) == simdjson::SUCCESS &&
         obj["error"].get_object().get(error) == simdjson::SUCCESS &&
         GetInt(error, "code", &code) == Field::kOk && code == kJsonRpcMethodNotFound;
}

// The elements of an array's JSON text, each as JSON.
void AppendElements(std::string_view array_json, std::vector<std::string>* out) {
  auto doc = ParseJson(array_json);
  simdjson::dom::array array;
  if (!doc.ok() || doc->root.get_array().get(array) != simdjson::SUCCESS) return;
  for (simdjson::dom::element e : array) out->push_back(ToJson(e));
}

}  // namespace

void McpListingFiller::Fill(std::string function_id, std::string version, Publisher publisher,
                            std::string request_id, std::string traceparent,
                            std::function<void(bool)> done) {
  auto listing = std::make_shared<Listing>();
  auto finish = [this, listing, function_id, version, request_id,
                 done = std::move(done)]() mutable {
    v1::McpListingSet set;
    {
      std::lock_guard<std::mutex> lock(listing->mu);
      if (listing->failed) {
        if (done) done(false);
        return;
      }
      set.set_function_id(function_id);
      set.set_version(version);
      v1::McpListing* l = set.mutable_listing();
      l->set_tools_json(ArrayOf(listing->items[0]));
      l->set_resources_json(ArrayOf(listing->items[1]));
      l->set_resource_templates_json(ArrayOf(listing->items[2]));
      l->set_prompts_json(ArrayOf(listing->items[3]));
    }
    backend_.StoreListing(set, [function_id, request_id, done](v1::McpListingSetReply reply) {
      if (reply.has_problem()) {
        log::Warn("MCP listing not stored")
            .Str("request_id", request_id)
            .Str("function_id", function_id)
            .Str("problem", reply.problem().code());
      }
      if (done) done(!reply.has_problem());
    });
  };
  // Runs page `page` of method i, then the next page or, on the last, the end of that method.
  auto run = std::make_shared<std::function<void(size_t, int, std::string)>>();
  *run = [this, listing, run, finish, function_id, version, publisher, request_id, traceparent](
             size_t i, int page, std::string cursor) mutable {
    v1::InvokeJob job;
    job.set_request_id(request_id);
    job.set_execution_id(NewUuid());
    job.set_api_key_sha256(publisher.api_key_sha256);
    job.set_session_token_sha256(publisher.session_token_sha256);
    job.set_function_id(function_id);
    job.set_version(version);
    job.set_body_check(v1::BODY_OK);
    job.set_event_json(ListRequest(kListMethods[i].method, cursor));
    job.set_traceparent(traceparent);
    backend_.Invoke(
        std::move(job),
        [listing, run, finish, i, page](v1::InvokeReply reply) mutable {
          std::optional<ListPage> result;
          bool failed = false;
          if (reply.has_problem()) {
            failed = true;
          } else if (!IsMethodNotFound(reply.result().body())) {
            result = ListResultPage(reply.result().body(), kListMethods[i].member);
            failed = !result.has_value();
          }
          bool last = false;
          std::string next;  // the cursor of the next page to ask for, if any
          {
            std::lock_guard<std::mutex> lock(listing->mu);
            if (result) AppendElements(result->items_json, &listing->items[i]);
            listing->failed = listing->failed || failed;
            if (result && !result->next_cursor.empty() && page + 1 < kMaxListPages &&
                !listing->failed) {
              next = result->next_cursor;  // this method stays pending
            } else {
              last = --listing->pending == 0;
            }
          }
          if (!next.empty()) return (*run)(i, page + 1, std::move(next));
          if (last) {
            *run = nullptr;  // breaks the cycle between run and its own closure
            finish();
          }
        },
        NoticeSink());
  };
  for (size_t i = 0; i < kListMethods.size(); ++i) (*run)(i, 0, "");
}

}  // namespace toolgate::edge
