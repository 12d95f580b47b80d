#include "toolgate/executor/ca_bundle.h"

#include <sys/stat.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string_view>

namespace toolgate::executor {
namespace {

constexpr std::string_view kBegin = "-----BEGIN CERTIFICATE-----";
constexpr std::string_view kEnd = "-----END CERTIFICATE-----";

bool ReadFile(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream text;
  text << in.rdbuf();
  *out = text.str();
  return !in.bad();
}

// At least one certificate, and every one that begins ends.
bool HoldsPemCertificates(std::string_view pem) {
  size_t count = 0;
  for (size_t at = pem.find(kBegin); at != std::string_view::npos; at = pem.find(kBegin, at)) {
    size_t end = pem.find(kEnd, at);
    if (end == std::string_view::npos) return false;
    ++count;
    at = end + kEnd.size();
  }
  return count > 0;
}

}  // namespace

Result<std::string> WriteCaBundle(const std::string& operator_ca_file,
                                  const std::string& system_bundle, const std::string& directory) {
  std::string operator_ca;
  if (!ReadFile(operator_ca_file, &operator_ca)) {
    return Status::InvalidArgument("cannot read " + operator_ca_file);
  }
  if (!HoldsPemCertificates(operator_ca)) {
    return Status::InvalidArgument(operator_ca_file + " holds no PEM certificate");
  }
  std::string bundle;
  ReadFile(system_bundle, &bundle);
  if (!bundle.empty() && bundle.back() != '\n') bundle.push_back('\n');
  bundle += operator_ca;

  const std::string path = directory + "/ca-certificates.crt";
  const std::string temporary = path + ".new";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out << bundle;
    if (!out.flush()) return Status::Internal("cannot write " + temporary);
  }
  // Whole or not at all: a sandbox never sees half a bundle.
  if (::chmod(temporary.c_str(), 0644) != 0 || std::rename(temporary.c_str(), path.c_str()) != 0) {
    std::remove(temporary.c_str());
    return Status::Internal("cannot write " + path);
  }
  return path;
}

}  // namespace toolgate::executor
