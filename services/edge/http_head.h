// The HTTP/1.1 a request answered by the edge's front itself needs (http_front.h, FrontRoute):
// the head, parsed, and its response, written, are libs/net's (toolgate/net/http1.h); the front
// has already framed and checked the head (request_framer.h). What only the edge reads of a head
// is here.
#pragma once

#include <string>
#include <string_view>

#include "toolgate/net/http1.h"

namespace toolgate::edge {

using net::Chunk;
using net::ChunkedResponseHead;
using net::kLastChunk;
using net::ParseRequestHead;
using net::RequestHead;
using net::ResponseBytes;

// The API key from an Authorization value, "<key>" or "Bearer <key>" (any case), trimmed; empty
// when there is none.
std::string ApiKeyFrom(std::string_view authorization);

}  // namespace toolgate::edge
