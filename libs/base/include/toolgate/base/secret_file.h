// Secret files: passwords and keys kept one per file, readable by their owner only.
//
// The launcher generates every credential of the embedded default with EnsureSecretFile (once:
// a later run reads the same value back), and services read theirs with ReadSecretFile, so a
// password never appears on a command line (world-readable in /proc) or in a shared config.
// Thread-compatible: concurrent calls on different paths are safe; on one path, the first
// writer wins (the file appears whole, by rename).
#pragma once

#include <filesystem>
#include <string>

#include "toolgate/base/status.h"

namespace toolgate {

// A file's contents without its trailing newline(s). NotFound when the file is missing,
// InvalidArgument when it is empty.
Result<std::string> ReadSecretFile(const std::filesystem::path& path);

struct SecretFile {
  std::string value;
  bool created = false;  // true when this call generated it
};

// Reads path, or when it does not exist creates it (mode 0600, whole, by rename) holding a new
// random secret of 32 lower-case hex characters per 16 bytes of `bytes`. A secret made of hex
// digits needs no quoting in a URL, a config file or SQL. Internal when it cannot be written.
// Call InitCrypto() first.
Result<SecretFile> EnsureSecretFile(const std::filesystem::path& path, size_t bytes = 24);

}  // namespace toolgate
