#include "http_head.h"

#include <strings.h>

namespace toolgate::edge {

std::string ApiKeyFrom(std::string_view value) {
  while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  if (value.size() > 7 && strncasecmp(value.data(), "bearer ", 7) == 0) value.remove_prefix(7);
  while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  while (!value.empty() && value.back() == ' ') value.remove_suffix(1);
  return std::string(value);
}

}  // namespace toolgate::edge
