// McpListingFiller: what an MCP version lists, asked of its handler once, right after it is
// published, and kept by the registry with the version (toolgate.proto McpListing), so that a
// workspace tools/list runs and bills no handler (docs/mcp.md, "The workspace endpoint").
//
// The listing runs as the publisher: its key or browser session goes through the ordinary invoke
// chain, like a tools/list the publisher sent itself (compute only: no fee on one's own tool).
// tools/list, resources/list, resources/templates/list and prompts/list run at once, each
// following nextCursor for at most kMaxListPages pages; a method the handler does not know
// (-32601) lists nothing. Any other failure (no balance, a handler error, a timeout) stores
// nothing: the version is then listed live, at the caller's cost, as before listings existed.
//
// No I/O of its own (McpBackend); thread-safe; callbacks may run on any thread.
#pragma once

#include <string>

#include "mcp_endpoint.h"

namespace toolgate::edge {

class McpListingFiller {
 public:
  static constexpr int kMaxListPages = 10;

  // Who published the version: exactly one of the two hashes is set.
  struct Publisher {
    std::string api_key_sha256;
    std::string session_token_sha256;
  };

  // backend must outlive the filler and every Fill in progress.
  explicit McpListingFiller(McpBackend& backend) : backend_(backend) {}

  // Lists function_id at version as publisher and hands the listing to the registry; done (may
  // be empty) learns whether it was stored.
  void Fill(std::string function_id, std::string version, Publisher publisher,
            std::string request_id, std::string traceparent,
            std::function<void(bool stored)> done = {});

 private:
  McpBackend& backend_;
};

}  // namespace toolgate::edge
