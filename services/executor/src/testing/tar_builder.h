// TarBuilder: gzip-compressed tar archives built entry by entry in memory, for the tests of
// bundles: well-formed ones from a directory of test data, and crafted ones holding what a
// bundle may not (paths out, links out, devices).
#pragma once

#include <string>

namespace toolgate::executor::testing {

class TarBuilder {
 public:
  TarBuilder();
  ~TarBuilder();
  TarBuilder(const TarBuilder&) = delete;
  TarBuilder& operator=(const TarBuilder&) = delete;

  TarBuilder& File(const std::string& path, const std::string& data, int mode = 0644);
  TarBuilder& Dir(const std::string& path);
  TarBuilder& Symlink(const std::string& path, const std::string& target);
  TarBuilder& Hardlink(const std::string& path, const std::string& target);
  TarBuilder& CharDevice(const std::string& path);
  TarBuilder& Fifo(const std::string& path);
  // Every file and directory under dir (recursively, in name order), as paths relative to it.
  TarBuilder& Tree(const std::string& dir);
  // The archive's bytes; the builder takes no more entries.
  std::string Finish();

 private:
  struct State;
  State* state_;
};

}  // namespace toolgate::executor::testing
