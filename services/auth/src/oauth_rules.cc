#include "toolgate/auth/oauth_rules.h"

#include <algorithm>
#include <cctype>

#include "toolgate/base/crypto.h"
#include "toolgate/base/json_writer.h"
#include "toolgate/base/strings.h"
#include "toolgate/core/http.h"
#include "toolgate/core/key_decision.h"
#include "toolgate/core/problem.h"

namespace toolgate::auth {
namespace {

bool IsUnreserved(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_' ||
         c == '~';
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::optional<std::string> FormDecode(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '+') {
      out += ' ';
    } else if (c == '%') {
      if (i + 2 >= text.size()) return std::nullopt;
      int hi = HexValue(text[i + 1]), lo = HexValue(text[i + 2]);
      if (hi < 0 || lo < 0) return std::nullopt;
      out += static_cast<char>(hi * 16 + lo);
      i += 2;
    } else {
      out += c;
    }
  }
  return out;
}

// The parts of an absolute URI that the rules look at.
struct UriParts {
  std::string scheme;  // lower case
  std::string authority;
  std::string host;  // lower case, brackets kept for IPv6
  std::string path_and_query;
  bool has_fragment = false;
  bool has_userinfo = false;
};

std::optional<UriParts> SplitUri(std::string_view uri) {
  size_t colon = uri.find(':');
  if (colon == std::string_view::npos || colon == 0) return std::nullopt;
  UriParts p;
  p.scheme = AsciiLower(uri.substr(0, colon));
  for (char c : p.scheme) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '+' && c != '-' && c != '.') {
      return std::nullopt;
    }
  }
  std::string_view rest = uri.substr(colon + 1);
  p.has_fragment = rest.find('#') != std::string_view::npos;
  if (rest.rfind("//", 0) == 0) {
    rest.remove_prefix(2);
    size_t end = rest.find_first_of("/?#");
    p.authority = std::string(rest.substr(0, end));
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end);
    std::string_view authority = p.authority;
    if (size_t at = authority.find('@'); at != std::string_view::npos) {
      p.has_userinfo = true;
      authority.remove_prefix(at + 1);
    }
    if (!authority.empty() && authority[0] == '[') {
      size_t close = authority.find(']');
      if (close == std::string_view::npos) return std::nullopt;
      p.host = AsciiLower(authority.substr(0, close + 1));
    } else {
      p.host = AsciiLower(authority.substr(0, authority.find(':')));
    }
  }
  p.path_and_query = std::string(rest.substr(0, rest.find('#')));
  for (char c : uri) {
    if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f) return std::nullopt;
  }
  return p;
}

}  // namespace

std::string NewOpaqueSecret(std::string_view prefix) {
  return std::string(prefix) + Base64UrlEncode(RandomBytes(32));
}

Result<std::map<std::string, std::string>> ParseForm(std::string_view body) {
  std::map<std::string, std::string> out;
  size_t start = 0;
  while (start <= body.size()) {
    size_t amp = body.find('&', start);
    if (amp == std::string_view::npos) amp = body.size();
    std::string_view pair = body.substr(start, amp - start);
    start = amp + 1;
    if (pair.empty()) {
      if (amp == body.size()) break;
      continue;
    }
    size_t eq = pair.find('=');
    auto name = FormDecode(pair.substr(0, eq));
    auto value =
        FormDecode(eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1));
    if (!name || !value) return Status::InvalidArgument("the form body has a malformed escape");
    if (name->empty()) continue;
    if (!out.emplace(*name, *value).second) {
      return Status::InvalidArgument("the parameter " + *name + " is given more than once");
    }
    if (amp == body.size()) break;
  }
  return out;
}

std::string FormEncode(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (char c : text) {
    if (IsUnreserved(c)) {
      out += c;
    } else {
      auto b = static_cast<unsigned char>(c);
      out += '%';
      out += kHex[b >> 4];
      out += kHex[b & 15];
    }
  }
  return out;
}

bool IsS256Challenge(std::string_view code_challenge) {
  if (code_challenge.size() != 43) return false;
  return std::all_of(code_challenge.begin(), code_challenge.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_';
  });
}

bool VerifyPkceS256(std::string_view code_verifier, std::string_view code_challenge) {
  if (code_verifier.size() < 43 || code_verifier.size() > 128) return false;
  if (!std::all_of(code_verifier.begin(), code_verifier.end(), IsUnreserved)) return false;
  return ConstantTimeEquals(Base64UrlEncode(Sha256(code_verifier)), code_challenge);
}

std::optional<std::string> CheckRedirectUri(std::string_view uri) {
  if (uri.empty() || uri.size() > 2000) return "must be a URI of at most 2000 characters";
  auto parts = SplitUri(uri);
  if (!parts) return "is not an absolute URI";
  if (parts->has_fragment) return "must not contain a fragment";
  if (parts->has_userinfo) return "must not contain user information";
  const std::string& scheme = parts->scheme;
  if (scheme == "https") {
    if (parts->host.empty()) return "must name a host";
    return std::nullopt;
  }
  if (scheme == "http") {
    if (parts->host == "127.0.0.1" || parts->host == "[::1]" || parts->host == "localhost") {
      return std::nullopt;
    }
    return "must use https, or http only to a loopback address (127.0.0.1, [::1], localhost)";
  }
  for (std::string_view banned : {"javascript", "data", "file", "blob", "vbscript", "about", "ftp",
                                  "ws", "wss", "filesystem"}) {
    if (scheme == banned) return "must not use the " + std::string(banned) + ": scheme";
  }
  // A native app's private-use scheme (RFC 8252 §7.1): a reversed domain name is recommended,
  // but clients in use register short ones ("cursor://..."), and only the app that claims the
  // scheme on the user's machine receives the redirect.
  return std::nullopt;
}

std::string RedirectHost(std::string_view uri) {
  auto parts = SplitUri(uri);
  if (!parts) return "";
  if (parts->scheme == "http" || parts->scheme == "https") return parts->host;
  // A native app: the scheme is what names it ("cursor://anysphere.cursor-retrieval").
  return parts->scheme + ":" + (parts->host.empty() ? "" : "//" + parts->host);
}

std::string WithQuery(std::string_view uri,
                      const std::vector<std::pair<std::string, std::string>>& params) {
  std::string out(uri.substr(0, uri.find('#')));
  char sep = out.find('?') == std::string::npos ? '?' : '&';
  if (sep == '&' && (out.back() == '?' || out.back() == '&')) sep = '\0';
  for (const auto& [name, value] : params) {
    if (sep != '\0') out += sep;
    out += FormEncode(name) + "=" + FormEncode(value);
    sep = '&';
  }
  return out;
}

Result<std::vector<std::string>> ParseScopes(const std::optional<std::string>& scope) {
  const std::vector<std::string> all = {std::string(core::kScopeMcpRead),
                                        std::string(core::kScopeMcpInvoke)};
  if (!scope || scope->find_first_not_of(' ') == std::string::npos) return all;
  std::vector<std::string> out;
  size_t start = 0;
  const std::string& s = *scope;
  while (start < s.size()) {
    size_t space = s.find(' ', start);
    if (space == std::string::npos) space = s.size();
    std::string one = s.substr(start, space - start);
    start = space + 1;
    if (one.empty() || one == "offline_access") continue;
    if (std::find(all.begin(), all.end(), one) == all.end()) {
      return Status::InvalidArgument("unknown scope " + one + "; this server grants " +
                                     JoinScopes(all));
    }
    if (std::find(out.begin(), out.end(), one) == out.end()) out.push_back(one);
  }
  if (out.empty()) return all;
  // Canonical order, so grants and their listings compare.
  std::sort(out.begin(), out.end(), [&all](const std::string& a, const std::string& b) {
    return std::find(all.begin(), all.end(), a) < std::find(all.begin(), all.end(), b);
  });
  return out;
}

std::string JoinScopes(const std::vector<std::string>& scopes) {
  std::string out;
  for (const auto& s : scopes) {
    if (!out.empty()) out += ' ';
    out += s;
  }
  return out;
}

std::string_view ScopeDescription(std::string_view scope) {
  if (scope == core::kScopeMcpRead) return "See the tools, resources and prompts of the endpoint";
  if (scope == core::kScopeMcpInvoke) {
    return "Call the tools, read the resources and get the prompts, billed to the organization "
           "you choose";
  }
  return "";
}

Result<ResourceTarget> ParseResource(const std::optional<std::string>& resource,
                                     std::string_view base) {
  ResourceTarget t;
  if (!resource) {
    t.path = "/mcp";
    t.url = std::string(base) + t.path;
    t.workspace = true;
    return t;
  }
  std::string_view r = *resource;
  auto refuse = [&] {
    return Status::InvalidArgument(
        "resource must be one of this server's MCP endpoints: " + std::string(base) + "/mcp or " +
        std::string(base) + "/mcp/functions/{function_id}[/{version}]");
  };
  if (r.size() > 500 ||
      AsciiLower(r.substr(0, std::min(r.size(), base.size()))) != AsciiLower(base)) {
    return refuse();
  }
  std::string_view path = r.substr(base.size());
  if (path.find_first_of("?#") != std::string_view::npos) {
    return Status::InvalidArgument("resource must not carry a query or fragment (RFC 8707)");
  }
  if (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  std::vector<std::string> segments;
  size_t start = 1;
  if (path.empty() || path[0] != '/') return refuse();
  while (start <= path.size()) {
    size_t slash = path.find('/', start);
    if (slash == std::string_view::npos) slash = path.size();
    std::string segment(path.substr(start, slash - start));
    if (segment.empty()) return refuse();
    segments.push_back(std::move(segment));
    start = slash + 1;
  }
  if (segments.empty() || segments[0] != "mcp") return refuse();
  if (segments.size() == 1) {
    t.workspace = true;
    t.path = "/mcp";
  } else {
    if (segments[1] != "functions" || segments.size() < 3 || segments.size() > 4) return refuse();
    t.function_id = AsciiLower(segments[2]);
    if (!IsUuid(t.function_id)) return refuse();
    if (segments.size() == 4) {
      t.version = segments[3];
      for (char c : t.version) {
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '+') {
          return refuse();
        }
      }
    }
    t.path = "/mcp/functions/" + t.function_id + (t.version.empty() ? "" : "/" + t.version);
  }
  t.url = std::string(base) + t.path;
  return t;
}

std::string PublicBase(std::string_view public_url, const v1::HttpRequest& request) {
  std::string base(public_url);
  if (base.empty()) {
    auto told = request.headers().find(std::string(core::kPublicBaseHeader));
    if (told != request.headers().end()) base = told->second;
  }
  if (base.empty()) {
    auto host = request.headers().find("host");
    base = "http://" + (host == request.headers().end() ? std::string("localhost") : host->second);
  }
  while (!base.empty() && base.back() == '/') base.pop_back();
  return base;
}

std::string AuthorizationServerMetadata(std::string_view base) {
  std::string b(base);
  JsonWriter w;
  w.BeginObject()
      .Field("issuer", b)
      .Field("authorization_endpoint", b + "/oauth/authorize")
      .Field("token_endpoint", b + "/oauth/token")
      .Field("registration_endpoint", b + "/oauth/register")
      .Field("revocation_endpoint", b + "/oauth/revoke");
  w.Key("response_types_supported").BeginArray().String("code").EndArray();
  w.Key("response_modes_supported").BeginArray().String("query").EndArray();
  w.Key("grant_types_supported")
      .BeginArray()
      .String("authorization_code")
      .String("refresh_token")
      .EndArray();
  w.Key("code_challenge_methods_supported").BeginArray().String("S256").EndArray();
  for (const char* key :
       {"token_endpoint_auth_methods_supported", "revocation_endpoint_auth_methods_supported"}) {
    w.Key(key)
        .BeginArray()
        .String("none")
        .String("client_secret_basic")
        .String("client_secret_post")
        .EndArray();
  }
  w.Key("scopes_supported")
      .BeginArray()
      .String(core::kScopeMcpRead)
      .String(core::kScopeMcpInvoke)
      .EndArray();
  w.Field("client_id_metadata_document_supported", true)
      .Field("authorization_response_iss_parameter_supported", true)
      .Field("service_documentation", b + "/docs/oauth");
  w.EndObject();
  return w.Take();
}

v1::HttpResponse TokenResponse(std::string_view access_token, int64_t expires_in_s,
                               std::string_view refresh_token, std::string_view scope) {
  JsonWriter w;
  w.BeginObject()
      .Field("access_token", access_token)
      .Field("token_type", "Bearer")
      .Field("expires_in", expires_in_s);
  if (!refresh_token.empty()) w.Field("refresh_token", refresh_token);
  w.Field("scope", scope).EndObject();
  v1::HttpResponse r = core::JsonResponse(200, w.Take());
  (*r.mutable_headers())["Cache-Control"] = "no-store";
  (*r.mutable_headers())["Pragma"] = "no-cache";
  return r;
}

v1::HttpResponse OAuthError(int status, std::string_view error, std::string_view description) {
  JsonWriter w;
  w.BeginObject().Field("error", error).Field("error_description", description).EndObject();
  v1::HttpResponse r = core::JsonResponse(status, w.Take());
  (*r.mutable_headers())["Cache-Control"] = "no-store";
  if (status == 401) (*r.mutable_headers())["WWW-Authenticate"] = "Basic realm=\"toolgate\"";
  return r;
}

}  // namespace toolgate::auth
