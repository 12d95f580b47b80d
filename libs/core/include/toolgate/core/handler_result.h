// Normalising what a handler returned into {statusCode, body} (contract section 3, "When the
// handler ran"). Every runtime encodes its handler's return value as JSON and calls this.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace toolgate::core {

struct HandlerResult {
  int status_code = 200;
  std::string body;  // a string; usually JSON text
};

// An object with an integer statusCode gives that code and its body: as is when a string, else
// JSON-encoded ("null" when absent). Any other value gives 200 and its JSON encoding. A status
// code outside 200..599 gives 500 with errorType InvalidStatusCode.
HandlerResult NormalizeHandlerResult(std::string_view returned_json);

// The body of a 500 for an error: {"errorType": type, "errorMessage": message}.
std::string ErrorBody(std::string_view type, std::string_view message);

}  // namespace toolgate::core
