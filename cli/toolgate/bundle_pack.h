// `toolgate publish DIR` for a bundle version: the directory packed as the .tar.gz the registry
// takes as "bundle".
//
// What goes in: every file, directory and relative symbolic link under DIR, except .git and
// .dev.vars (never: the latter holds `toolgate dev`'s values for the declared keys), the manifest
// (toolgate.json, which is the platform's, not the tool's), .toolgateignore itself, and whatever
// .toolgateignore's patterns exclude. The archive is reproducible: entries in name order, owned by
// 0:0, dated 0, modes kept to 0644/0755, so packing the same files twice gives the same bytes, and
// the same digest, which the registry and the executors store once.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "toolgate/base/status.h"

namespace toolgate::cli {

// .toolgateignore: gitignore-like patterns, one a line. Blank lines and lines starting with '#'
// are skipped; "!" re-includes what an earlier pattern excluded; a trailing "/" matches
// directories only; a pattern with a "/" before its end is anchored at DIR ("/build",
// "src/*.tmp"), one without matches a name at any depth ("*.pyc"); "*" and "?" stay within a
// name, "**" spans directories. The last pattern that matches a path decides; what is inside an
// excluded directory is excluded with it. Pure; thread-safe.
class IgnoreRules {
 public:
  static IgnoreRules Parse(std::string_view text);
  // Whether the path (relative to DIR, "/"-separated) is excluded; is_dir for a directory.
  bool Excluded(std::string_view path, bool is_dir) const;

 private:
  struct Rule {
    std::string pattern;
    bool negate = false;
    bool dir_only = false;
    bool anchored = false;
  };
  std::vector<Rule> rules_;
};

// The bundle of dir, as described above. InvalidArgument naming the path for what cannot go in
// a bundle (a device, a FIFO, a socket, an absolute link or one that leaves dir); Unavailable
// when a file cannot be read.
Result<std::string> PackBundle(const std::filesystem::path& dir);

// For a JavaScript bundle: when dir has package.json and no node_modules/, runs
// `npm ci --omit=dev` (with package-lock.json) or `npm install --omit=dev` (without) in dir, its
// output on stderr, so node_modules holds the production dependencies the bundle takes. Ok
// with nothing done otherwise; Unavailable when npm cannot run or fails.
Status InstallNodeModules(const std::filesystem::path& dir);

}  // namespace toolgate::cli
