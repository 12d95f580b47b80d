// toolgate-pack-bundle DIR OUT: the build's packer of the demo catalogue's bundle tools. Installs
// DIR's npm dependencies as `toolgate publish` does (npm ci --omit=dev from package-lock.json)
// and writes the bundle `toolgate publish DIR` would send to OUT, for the CLI to embed.
#include <cstdio>
#include <fstream>

#include "bundle_pack.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: toolgate-pack-bundle DIR OUT\n");
    return 2;
  }
  if (auto s = toolgate::cli::InstallNodeModules(argv[1]); !s.ok()) {
    std::fprintf(stderr, "toolgate-pack-bundle: %s\n", s.message().c_str());
    return 1;
  }
  auto bundle = toolgate::cli::PackBundle(argv[1]);
  if (!bundle.ok()) {
    std::fprintf(stderr, "toolgate-pack-bundle: %s\n", bundle.status().message().c_str());
    return 1;
  }
  std::ofstream out(argv[2], std::ios::binary | std::ios::trunc);
  out << *bundle;
  if (!out.flush()) {
    std::fprintf(stderr, "toolgate-pack-bundle: cannot write %s\n", argv[2]);
    return 1;
  }
  return 0;
}
