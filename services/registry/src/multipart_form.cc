#include "toolgate/registry/multipart_form.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <set>

#include "toolgate/base/strings.h"

namespace toolgate::registry {
namespace {

// The value of parameter `key` in a header value "type; a=b; c=\"d\"", unquoted; nullopt when
// absent. Quoted values may hold ';' and backslash escapes.
std::optional<std::string> Parameter(std::string_view header, std::string_view key) {
  size_t i = header.find(';');
  while (i != std::string_view::npos && i < header.size()) {
    ++i;
    while (i < header.size() && (header[i] == ' ' || header[i] == '\t')) ++i;
    size_t eq = header.find('=', i);
    if (eq == std::string_view::npos) return std::nullopt;
    std::string name = AsciiLower(TrimBlanks(header.substr(i, eq - i)));
    std::string value;
    size_t j = eq + 1;
    if (j < header.size() && header[j] == '"') {
      for (++j; j < header.size() && header[j] != '"'; ++j) {
        if (header[j] == '\\' && j + 1 < header.size()) ++j;
        value += header[j];
      }
      i = header.find(';', j);
    } else {
      size_t end = header.find(';', j);
      value =
          std::string(TrimBlanks(header.substr(j, end == std::string_view::npos ? end : end - j)));
      i = end;
    }
    if (name == key) return value;
  }
  return std::nullopt;
}

Status Malformed(std::string_view why) {
  return Status::InvalidArgument("the multipart/form-data body is malformed: " + std::string(why));
}

// Parses the header lines of one part (up to, not including, the blank line).
Status ReadPartHeaders(std::string_view headers, FormPart* part) {
  bool disposition = false;
  while (!headers.empty()) {
    size_t eol = headers.find("\r\n");
    std::string_view line = headers.substr(0, eol);
    headers = eol == std::string_view::npos ? std::string_view() : headers.substr(eol + 2);
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) return Malformed("a part header has no colon");
    std::string name = AsciiLower(TrimBlanks(line.substr(0, colon)));
    std::string_view value = TrimBlanks(line.substr(colon + 1));
    if (name == "content-disposition") {
      if (AsciiLower(TrimBlanks(value.substr(0, value.find(';')))) != "form-data") {
        return Malformed("a part's Content-Disposition is not form-data");
      }
      auto field = Parameter(value, "name");
      if (!field || field->empty()) return Malformed("a part has no name");
      part->name = *field;
      part->filename = Parameter(value, "filename").value_or("");
      disposition = true;
    } else if (name == "content-type") {
      part->content_type = std::string(value);
    }
  }
  if (!disposition) return Malformed("a part has no Content-Disposition");
  return Status::Ok();
}

}  // namespace

bool IsMultipartForm(std::string_view content_type) {
  return AsciiLower(TrimBlanks(content_type.substr(0, content_type.find(';')))) ==
         "multipart/form-data";
}

Result<std::vector<FormPart>> ParseMultipartForm(std::string_view content_type,
                                                 std::string_view body) {
  auto boundary = Parameter(content_type, "boundary");
  if (!boundary || boundary->empty() || boundary->size() > 200) {
    return Malformed("the Content-Type names no boundary");
  }
  const std::string delimiter = "--" + *boundary;
  const std::string inner = "\r\n" + delimiter;
  // The first delimiter starts the body or follows a preamble's CRLF.
  size_t at = body.substr(0, delimiter.size()) == delimiter ? 0 : body.find(inner);
  if (at == std::string_view::npos) return Malformed("the boundary never appears");
  if (at != 0) at += 2;
  std::vector<FormPart> parts;
  std::set<std::string> names;
  for (;;) {
    at += delimiter.size();
    if (body.substr(at, 2) == "--") break;  // the closing delimiter
    // Transport padding, then the line break that ends the delimiter line.
    while (at < body.size() && (body[at] == ' ' || body[at] == '\t')) ++at;
    if (body.substr(at, 2) != "\r\n") return Malformed("a delimiter line does not end in CRLF");
    at += 2;
    size_t headers_end = body.find("\r\n\r\n", at);
    size_t content = headers_end + 4;
    if (body.substr(at, 2) == "\r\n") {  // a part without headers
      headers_end = at;
      content = at + 2;
    }
    if (headers_end == std::string_view::npos) return Malformed("a part's headers never end");
    FormPart part;
    if (Status s = ReadPartHeaders(body.substr(at, headers_end - at), &part); !s.ok()) return s;
    size_t end = body.find(inner, content);
    if (end == std::string_view::npos) return Malformed("the closing boundary is missing");
    part.body = body.substr(content, end - content);
    if (!names.insert(part.name).second) {
      return Malformed("two parts are named \"" + part.name + "\"");
    }
    parts.push_back(std::move(part));
    at = end + 2;
  }
  return parts;
}

}  // namespace toolgate::registry
