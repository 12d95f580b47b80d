// The Integrate tab's code: one complete, runnable call of the invoke endpoint in curl, Python
// (standard library only) and JavaScript (Node.js 18+, built-in fetch). Pure functions: no
// I/O, thread-safe.
//
// Each snippet carries the placeholder <API_KEY> for the caller's key and, exactly when the
// version declares keys, an X-Env-Keys header with one NAME=<secret_id> per declared key, for
// the caller to replace with the ids of their own secrets.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace toolgate::registry {

struct SnippetRequest {
  std::string base_url;     // "http://127.0.0.1:8080", no trailing '/'
  std::string function_id;  // lower-case UUID
  std::string version;      // "" calls the latest version (the path without a version)
  std::string event_json;   // any JSON value; "{}" when the version has no example
  std::vector<std::string> declared_keys;
};

struct Snippets {
  std::string curl;  // POSIX shell: single-quoted arguments, lines joined with " \"
  std::string python;
  std::string javascript;
};

Snippets RenderSnippets(const SnippetRequest& request);

// "http://<host>" for a Host header made of host name, IPv4 or [IPv6] characters and an
// optional port; fallback for anything else (absent, or characters that could break out of a
// snippet's quoting).
std::string BaseUrlFor(std::string_view host, std::string_view fallback);

}  // namespace toolgate::registry
