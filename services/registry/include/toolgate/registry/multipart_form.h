// A multipart/form-data body (RFC 7578) split into its parts, for uploads that carry a file
// next to JSON fields (POST /functions/{id}/versions with a bundle). Pure functions of their
// arguments; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "toolgate/base/status.h"

namespace toolgate::registry {

struct FormPart {
  std::string name;          // Content-Disposition's name
  std::string filename;      // Content-Disposition's filename; "" when none was given
  std::string content_type;  // the part's Content-Type; "" when none was given
  std::string_view body;     // points into the body given to ParseMultipartForm
};

// True when content_type (a Content-Type header value) is multipart/form-data, in any case.
bool IsMultipartForm(std::string_view content_type);

// The parts of body, in order, given the request's Content-Type (which names the boundary).
// InvalidArgument, with a message for the client, when the boundary is missing, a delimiter or
// the closing delimiter is missing, a part has no Content-Disposition form-data name, or two
// parts share a name. The parts' bodies point into body, which must outlive them.
Result<std::vector<FormPart>> ParseMultipartForm(std::string_view content_type,
                                                 std::string_view body);

}  // namespace toolgate::registry
