#include "request_framer.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <vector>

#include "toolgate/base/strings.h"
#include "toolgate/net/http1.h"
#include "upload_route.h"

namespace toolgate::edge {
namespace {

constexpr std::string_view kClientHeader = "X-Toolgate-Client";
constexpr size_t kMaxChunkLine = 1024;
constexpr size_t kMaxTrailerLine = 8192;

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

std::optional<uint64_t> Digits(std::string_view s) {
  if (s.empty() || s.size() > 18) return std::nullopt;
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  return v;
}

// The size at the start of a chunk-size line ("1a;ext=1\r"), or nullopt.
std::optional<uint64_t> ChunkSize(std::string_view line) {
  line = Trim(line.substr(0, line.find(';')), kBlanks, " \t\r");
  if (line.empty() || line.size() > 10) return std::nullopt;
  uint64_t v = 0;
  for (char c : line) {
    int d = std::isdigit(static_cast<unsigned char>(c))
                ? c - '0'
                : (std::isxdigit(static_cast<unsigned char>(c))
                       ? std::tolower(static_cast<unsigned char>(c)) - 'a' + 10
                       : -1);
    if (d < 0) return std::nullopt;
    v = v * 16 + static_cast<uint64_t>(d);
  }
  return v;
}

}  // namespace

RequestFramer::RequestFramer(size_t max_head_bytes, size_t max_body_bytes,
                             ClientHeader client_header, size_t max_upload_bytes, bool hold_bodies)
    : max_head_bytes_(max_head_bytes),
      max_body_bytes_(max_body_bytes),
      max_upload_bytes_(std::max(max_upload_bytes, max_body_bytes)),
      hold_bodies_(hold_bodies),
      body_limit_(max_body_bytes),
      client_header_(std::move(client_header)) {}

void RequestFramer::Fail(Error error) {
  phase_ = Phase::kError;
  error_ = error;
  head_.clear();
  line_.clear();
}

void RequestFramer::FinishRequest() {
  ++completed_;
  phase_ = Phase::kIdle;
}

void RequestFramer::Admit(size_t body_limit) {
  if (phase_ != Phase::kHeld) return;
  held_head_.clear();
  body_limit_ = std::min(body_limit_, body_limit);
  if (!chunked_ && body_left_ > body_limit_) return Fail(Error::kBodyTooLarge);
  phase_ = Phase::kBody;
}

size_t RequestFramer::Feed(std::string_view data, int64_t now_ms, std::string* out) {
  const size_t given = data.size();
  while (!data.empty() && phase_ != Phase::kError) {
    if (phase_ == Phase::kHeld) return given - data.size();
    if (phase_ == Phase::kIdle) {
      // Empty lines between requests are allowed (RFC 9112, 2.2) and not passed on.
      if (data.front() == '\r' || data.front() == '\n') {
        data.remove_prefix(1);
        continue;
      }
      phase_ = Phase::kHead;
      phase_started_ms_ = now_ms;
    }
    if (phase_ == Phase::kHead) {
      size_t searched = head_.size() < 3 ? 0 : head_.size() - 3;
      size_t take =
          std::min(data.size(), max_head_bytes_ + 1 - std::min(head_.size(), max_head_bytes_));
      head_.append(data.substr(0, take));
      size_t end = head_.find("\r\n\r\n", searched);
      if (end == std::string::npos) {
        data.remove_prefix(take);
        if (head_.size() > max_head_bytes_) Fail(Error::kHeadTooLarge);
        continue;
      }
      // Bytes after the blank line belong to the body or the next request.
      size_t excess = head_.size() - (end + 4);
      data.remove_prefix(take - excess);
      head_.resize(end + 4);
      FinishHead(now_ms, out);
      continue;
    }
    // kBody
    if (chunked_) {
      data.remove_prefix(FeedChunked(data, out));
      continue;
    }
    size_t n = static_cast<size_t>(std::min<uint64_t>(body_left_, data.size()));
    out->append(data.substr(0, n));
    data.remove_prefix(n);
    body_left_ -= n;
    if (body_left_ == 0) FinishRequest();
  }
  return given;
}

void RequestFramer::FinishHead(int64_t now_ms, std::string* out) {
  std::string head = std::move(head_);
  head_.clear();
  std::vector<std::string_view> lines;
  std::string_view rest(head);
  rest.remove_suffix(2);  // the blank line's CRLF; every line below ends in its own CRLF
  while (!rest.empty()) {
    size_t eol = rest.find("\r\n");
    lines.push_back(rest.substr(0, eol));
    rest.remove_prefix(eol + 2);
  }
  if (lines.empty() || std::count(lines[0].begin(), lines[0].end(), ' ') < 2) {
    return Fail(Error::kBadFraming);
  }
  // What two parsers could read differently (a bare CR or LF, NUL, folding, a name that is no
  // token, conflicting lengths or codings) is refused by the one rule the egress gateway applies
  // too; the loop below only reads what the head says.
  if (!net::FramingError(head, lines[0].ends_with(" HTTP/1.0")).empty()) {
    return Fail(Error::kBadFraming);
  }
  {
    std::string_view request_line = lines[0];
    size_t method_end = request_line.find(' ');
    size_t target_end = request_line.find(' ', method_end + 1);
    body_limit_ = IsUploadRoute(request_line.substr(0, method_end),
                                request_line.substr(method_end + 1, target_end - method_end - 1))
                      ? max_upload_bytes_
                      : max_body_bytes_;
  }
  std::optional<uint64_t> length;
  bool has_encoding = false;
  bool has_connection = false;
  std::string forwarded_for;
  std::string kept;
  kept.reserve(head.size() + 64);
  kept.append(lines[0]).append("\r\n");
  for (size_t i = 1; i < lines.size(); ++i) {
    std::string_view line = lines[i];
    size_t colon = line.find(':');
    // No folded lines and no space before the colon (RFC 9112, 5.1 and 5.2).
    if (colon == std::string_view::npos || colon == 0 || line.front() == ' ' ||
        line.front() == '\t' || line[colon - 1] == ' ' || line[colon - 1] == '\t') {
      return Fail(Error::kBadFraming);
    }
    std::string_view name = line.substr(0, colon);
    std::string_view value = Trim(line.substr(colon + 1), kBlanks, " \t\r");
    if (EqualsIgnoreCase(name, kClientHeader)) continue;
    if (EqualsIgnoreCase(name, "Content-Length")) {
      auto v = Digits(value);
      if (!v || (length && *length != *v)) return Fail(Error::kBadFraming);
      length = v;
    } else if (EqualsIgnoreCase(name, "Transfer-Encoding")) {
      if (has_encoding || !EqualsIgnoreCase(value, "chunked")) return Fail(Error::kBadFraming);
      has_encoding = true;
    } else if (EqualsIgnoreCase(name, "Connection")) {
      has_connection = true;
    } else if (EqualsIgnoreCase(name, "X-Forwarded-For")) {
      if (!forwarded_for.empty()) forwarded_for.append(", ");
      forwarded_for.append(value);
    }
    kept.append(line).append("\r\n");
  }
  declared_length_ = length.value_or(0);
  if (length && has_encoding) return Fail(Error::kBadFraming);
  if (length && *length > body_limit_) return Fail(Error::kBodyTooLarge);
  // HTTP/1.1 keeps a connection open unless the client says "Connection: close" (RFC 9112,
  // 9.3); Pistache closes one that does not ask for keep-alive, so the front asks for it.
  if (!has_connection && lines[0].ends_with(" HTTP/1.1")) kept.append("Connection: keep-alive\r\n");
  kept.append(kClientHeader).append(": ").append(client_header_(forwarded_for)).append("\r\n\r\n");
  out->append(kept);
  chunked_ = has_encoding;
  body_left_ = length.value_or(0);
  if (!chunked_ && body_left_ == 0) return FinishRequest();
  phase_ = Phase::kBody;
  phase_started_ms_ = now_ms;
  chunk_ = Chunk::kSize;
  chunk_left_ = 0;
  body_seen_ = 0;
  line_.clear();
  if (hold_bodies_) {
    phase_ = Phase::kHeld;
    held_head_ = std::move(kept);
  }
}

size_t RequestFramer::FeedChunked(std::string_view data, std::string* out) {
  if (chunk_ == Chunk::kData) {
    size_t n = static_cast<size_t>(std::min<uint64_t>(chunk_left_, data.size()));
    out->append(data.substr(0, n));
    chunk_left_ -= n;
    if (chunk_left_ == 0) chunk_ = Chunk::kDataEnd;
    return n;
  }
  // A line: a chunk size, the CRLF after a chunk's data, or a trailer field.
  size_t eol = data.find('\n');
  size_t take = eol == std::string_view::npos ? data.size() : eol + 1;
  line_.append(data.substr(0, take));
  const size_t max_line = chunk_ == Chunk::kTrailer ? kMaxTrailerLine : kMaxChunkLine;
  if (line_.size() > max_line) {
    Fail(Error::kBadFraming);
    return take;
  }
  if (eol == std::string_view::npos) return take;
  std::string_view line(line_);
  line.remove_suffix(1);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  switch (chunk_) {
    case Chunk::kSize: {
      auto size = ChunkSize(line);
      if (!size) {
        Fail(Error::kBadFraming);
        return take;
      }
      if (body_seen_ + *size > body_limit_) {
        Fail(Error::kBodyTooLarge);
        return take;
      }
      body_seen_ += *size;
      chunk_left_ = *size;
      chunk_ = *size == 0 ? Chunk::kTrailer : Chunk::kData;
      break;
    }
    case Chunk::kDataEnd:
      if (!line.empty()) {
        Fail(Error::kBadFraming);
        return take;
      }
      chunk_ = Chunk::kSize;
      break;
    case Chunk::kTrailer:
      break;
    case Chunk::kData:
      break;
  }
  out->append(line_);
  // The size line "0" is never empty, so an empty line in kTrailer ends the trailer.
  const bool last = chunk_ == Chunk::kTrailer && line.empty();
  line_.clear();
  if (last) FinishRequest();
  return take;
}

void ResponseCloseWatch::Feed(std::string_view data) {
  constexpr size_t kMaxHead = 64 << 10;
  while (!data.empty() && !blind_ && close_offset_ == 0) {
    if (in_body_) {
      uint64_t n = std::min<uint64_t>(body_left_, data.size());
      body_left_ -= n;
      seen_ += n;
      data.remove_prefix(static_cast<size_t>(n));
      if (body_left_ == 0) {
        in_body_ = false;
        ++completed_;
      }
      continue;
    }
    size_t before = head_.size();
    size_t take = std::min(data.size(), kMaxHead - std::min(kMaxHead, before));
    head_.append(data.substr(0, take));
    size_t end = head_.find("\r\n\r\n", before >= 3 ? before - 3 : 0);
    if (end == std::string::npos) {
      seen_ += take;
      data.remove_prefix(take);
      if (head_.size() >= kMaxHead) blind_ = true;
      continue;
    }
    size_t used = end + 4 - before;  // of data, up to the head's end
    seen_ += used;
    data.remove_prefix(used);
    head_.resize(end + 4);
    FinishHead();
  }
  seen_ += data.size();
}

void ResponseCloseWatch::FinishHead() {
  std::optional<uint64_t> length;
  bool close = false;
  std::string_view rest(head_);
  size_t eol = rest.find("\r\n");
  std::string_view status_line = rest.substr(0, eol);
  size_t space = status_line.find(' ');
  const bool informational = space != std::string_view::npos && space + 1 < status_line.size() &&
                             status_line[space + 1] == '1';
  rest.remove_prefix(eol + 2);
  while (!rest.empty()) {
    eol = rest.find("\r\n");
    std::string_view line = rest.substr(0, eol);
    rest.remove_prefix(eol + 2);
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    std::string_view name = line.substr(0, colon);
    std::string_view value = Trim(line.substr(colon + 1), kBlanks, " \t\r");
    if (EqualsIgnoreCase(name, "Content-Length")) length = Digits(value);
    if (EqualsIgnoreCase(name, "Connection") && EqualsIgnoreCase(value, "close")) close = true;
  }
  head_.clear();
  if (informational) return;  // 1xx: the real response follows
  if (!length) {
    blind_ = true;
    return;
  }
  if (close) close_offset_ = seen_ + *length;
  body_left_ = *length;
  in_body_ = body_left_ > 0;
  if (!in_body_) ++completed_;
}

}  // namespace toolgate::edge
