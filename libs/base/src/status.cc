#include "toolgate/base/status.h"

namespace toolgate {

const std::string& Status::message() const {
  static const std::string kEmpty;
  return rep_ ? rep_->message : kEmpty;
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  const char* name = "internal";
  switch (rep_->code) {
    case Code::kOk: name = "ok"; break;
    case Code::kInvalidArgument: name = "invalid argument"; break;
    case Code::kNotFound: name = "not found"; break;
    case Code::kUnavailable: name = "unavailable"; break;
    case Code::kTimeout: name = "timeout"; break;
    case Code::kInternal: name = "internal"; break;
    case Code::kConflict: name = "conflict"; break;
  }
  return std::string(name) + ": " + rep_->message;
}

}  // namespace toolgate
