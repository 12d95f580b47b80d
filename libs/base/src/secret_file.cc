#include "toolgate/base/secret_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "toolgate/base/crypto.h"

namespace fs = std::filesystem;

namespace toolgate {

Result<std::string> ReadSecretFile(const fs::path& path) {
  std::ifstream in(path);
  if (!in) return Status::NotFound("cannot read " + path.string());
  std::stringstream ss;
  ss << in.rdbuf();
  std::string value = ss.str();
  while (!value.empty() && (value.back() == '\n' || value.back() == '\r')) value.pop_back();
  if (value.empty()) return Status::InvalidArgument(path.string() + " is empty");
  return value;
}

Result<SecretFile> EnsureSecretFile(const fs::path& path, size_t bytes) {
  if (fs::exists(path)) {
    auto value = ReadSecretFile(path);
    if (!value.ok()) return value.status();
    return SecretFile{std::move(value).value(), false};
  }
  std::string value = HexEncode(RandomBytes(bytes));
  std::string text = value + "\n";
  fs::path tmp = path.string() + ".tmp";
  // O_EXCL and 0600 from the first byte: the secret is never readable by anyone else, not even
  // between open and chmod.
  ::unlink(tmp.c_str());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return Status::Internal("cannot create " + tmp.string() + ": " + strerror(errno));
  bool ok = ::fchmod(fd, 0600) == 0 &&
            ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) &&
            ::fsync(fd) == 0;
  ok = ::close(fd) == 0 && ok;
  if (!ok || ::rename(tmp.c_str(), path.c_str()) != 0) {
    ::unlink(tmp.c_str());
    return Status::Internal("cannot write " + path.string() + ": " + strerror(errno));
  }
  return SecretFile{std::move(value), true};
}

}  // namespace toolgate
