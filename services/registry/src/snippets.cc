#include "toolgate/registry/snippets.h"

#include "toolgate/base/json.h"
#include "toolgate/base/json_writer.h"
#include "toolgate/base/strings.h"

namespace toolgate::registry {
namespace {

enum class Dialect { kPython, kJavaScript };

// A JSON value as a literal of the language: JSON itself for JavaScript; for Python the same
// with True, False and None (JSON string escapes are valid Python escapes).
void AppendLiteral(std::string& out, simdjson::dom::element e, Dialect d) {
  switch (e.type()) {
    case simdjson::dom::element_type::OBJECT: {
      out += '{';
      bool first = true;
      for (auto [key, value] : simdjson::dom::object(e)) {
        if (!first) out += ", ";
        first = false;
        JsonWriter::AppendQuoted(out, key);
        out += ": ";
        AppendLiteral(out, value, d);
      }
      out += '}';
      return;
    }
    case simdjson::dom::element_type::ARRAY: {
      out += '[';
      bool first = true;
      for (auto value : simdjson::dom::array(e)) {
        if (!first) out += ", ";
        first = false;
        AppendLiteral(out, value, d);
      }
      out += ']';
      return;
    }
    case simdjson::dom::element_type::BOOL:
      if (d == Dialect::kPython) {
        out += bool(e) ? "True" : "False";
      } else {
        out += bool(e) ? "true" : "false";
      }
      return;
    case simdjson::dom::element_type::NULL_VALUE:
      out += d == Dialect::kPython ? "None" : "null";
      return;
    default:  // strings and numbers
      out += ToJson(e);
      return;
  }
}

std::string Literal(std::string_view json, Dialect d) {
  auto doc = ParseJson(json);
  if (!doc.ok()) return "{}";
  std::string out;
  AppendLiteral(out, doc->root, d);
  return out;
}

std::string InvokeUrl(const SnippetRequest& r) {
  return r.base_url + "/api/v1/functions/" + r.function_id + "/" +
         (r.version.empty() ? "" : r.version + "/") + "invoke";
}

std::string EnvKeysValue(const std::vector<std::string>& keys) {
  std::string out;
  for (const auto& k : keys) {
    if (!out.empty()) out += ", ";
    out += k + "=<secret_id>";
  }
  return out;
}

std::string Curl(const SnippetRequest& r, const std::string& event) {
  std::string out = "curl -sS -X POST " + ShellQuote(InvokeUrl(r)) + " \\\n" +
                    "  -H 'Authorization: <API_KEY>' \\\n" +
                    "  -H 'Content-Type: application/json' \\\n";
  if (!r.declared_keys.empty()) {
    out += "  -H " + ShellQuote("X-Env-Keys: " + EnvKeysValue(r.declared_keys)) + " \\\n";
  }
  out += "  -d " + ShellQuote("{\"event\":" + event + "}") + "\n";
  return out;
}

std::string Python(const SnippetRequest& r, const std::string& event) {
  std::string out =
      "import json\n"
      "import urllib.error\n"
      "import urllib.request\n"
      "\n"
      "event = " +
      Literal(event, Dialect::kPython) +
      "\n"
      "\n"
      "request = urllib.request.Request(\n"
      "    " +
      JsonWriter::Quote(InvokeUrl(r)) +
      ",\n"
      "    data=json.dumps({\"event\": event}).encode(),\n"
      "    headers={\n"
      "        \"Authorization\": \"<API_KEY>\",\n"
      "        \"Content-Type\": \"application/json\",\n";
  if (!r.declared_keys.empty()) {
    out += "        \"X-Env-Keys\": " + JsonWriter::Quote(EnvKeysValue(r.declared_keys)) + ",\n";
  }
  out +=
      "    },\n"
      "    method=\"POST\",\n"
      ")\n"
      "try:\n"
      "    with urllib.request.urlopen(request) as response:\n"
      "        print(response.status, json.load(response))\n"
      "except urllib.error.HTTPError as error:\n"
      "    # Platform errors, and handlers that answer 400 or above.\n"
      "    print(error.code, json.load(error))\n";
  return out;
}

std::string JavaScript(const SnippetRequest& r, const std::string& event) {
  std::string out =
      "// Node.js 18 or later: fetch is built in.\n"
      "const event = " +
      Literal(event, Dialect::kJavaScript) +
      ";\n"
      "\n"
      "fetch(" +
      JsonWriter::Quote(InvokeUrl(r)) +
      ", {\n"
      "  method: \"POST\",\n"
      "  headers: {\n"
      "    \"Authorization\": \"<API_KEY>\",\n"
      "    \"Content-Type\": \"application/json\",\n";
  if (!r.declared_keys.empty()) {
    out += "    \"X-Env-Keys\": " + JsonWriter::Quote(EnvKeysValue(r.declared_keys)) + ",\n";
  }
  out +=
      "  },\n"
      "  body: JSON.stringify({ event }),\n"
      "})\n"
      "  .then((response) => response.json().then((result) => console.log(response.status, "
      "result)))\n"
      "  .catch((error) => console.error(error));\n";
  return out;
}

}  // namespace

Snippets RenderSnippets(const SnippetRequest& request) {
  auto doc = ParseJson(request.event_json);
  const std::string event = doc.ok() ? ToJson(doc->root) : "{}";
  return Snippets{Curl(request, event), Python(request, event), JavaScript(request, event)};
}

std::string BaseUrlFor(std::string_view host, std::string_view fallback) {
  constexpr std::string_view kAllowed =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-:[]";
  if (host.empty() || host.size() > 255 || host.find_first_not_of(kAllowed) != host.npos) {
    return std::string(fallback);
  }
  return "http://" + std::string(host);
}

}  // namespace toolgate::registry
