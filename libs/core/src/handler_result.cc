#include "toolgate/core/handler_result.h"

#include <simdjson.h>

#include "toolgate/base/json_writer.h"

namespace toolgate::core {

std::string ErrorBody(std::string_view type, std::string_view message) {
  JsonWriter w;
  w.BeginObject().Field("errorType", type).Field("errorMessage", message).EndObject();
  return w.Take();
}

HandlerResult NormalizeHandlerResult(std::string_view returned_json) {
  simdjson::dom::parser parser;
  simdjson::padded_string padded(returned_json);
  simdjson::dom::element root;
  if (parser.parse(padded).get(root)) {
    return {500, ErrorBody("InvalidResult", "the handler's return value is not serializable")};
  }
  simdjson::dom::object obj;
  simdjson::dom::element code;
  if (root.get_object().get(obj) == simdjson::SUCCESS &&
      obj["statusCode"].get(code) == simdjson::SUCCESS) {
    int64_t status;
    double d;
    bool integral = code.get_int64().get(status) == simdjson::SUCCESS;
    // The range check comes first: casting a double outside int64's range is undefined.
    if (!integral && code.get_double().get(d) == simdjson::SUCCESS && d > -1e18 && d < 1e18 &&
        d == static_cast<double>(static_cast<int64_t>(d))) {
      status = static_cast<int64_t>(d);  // JavaScript and Lua numbers may arrive as 200.0
      integral = true;
    }
    if (integral) {
      if (status < 200 || status > 599) {
        return {500, ErrorBody("InvalidStatusCode",
                               "statusCode " + std::to_string(status) + " is not in 200..599")};
      }
      HandlerResult out{static_cast<int>(status), "null"};
      simdjson::dom::element body;
      if (obj["body"].get(body) == simdjson::SUCCESS) {
        std::string_view s;
        out.body = body.get_string().get(s) == simdjson::SUCCESS ? std::string(s)
                                                                 : simdjson::minify(body);
      }
      return out;
    }
  }
  return {200, simdjson::minify(root)};
}

}  // namespace toolgate::core
