// RawConnection: a plain TCP connection to a test system's edge, for requests no well-behaved
// HTTP client sends (a head without its body, a body in pieces, pipelined or malformed bytes)
// and for reading exactly what the edge answers, refusals and connection ends included.
// One per thread; closed when destroyed.
#pragma once

#include <string>

#include "system.h"

namespace toolgate::testing {

class RawConnection {
 public:
  // Connects to system's public edge port (fails the test when it cannot).
  explicit RawConnection(const System& system = *g_system);
  ~RawConnection();
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;

  void Close();
  // Sends what it can; false when the edge closed the connection part way.
  bool Send(const std::string& data);
  // Everything the edge sends until it closes the connection or deadline_ms passes; *closed
  // tells which.
  std::string ReadUntilClosed(int deadline_ms, bool* closed);
  // What the edge sends until a whole response head has arrived, it closes the connection, or
  // deadline_ms passes.
  std::string ReadHead(int deadline_ms);
  // One answer: its head and the body its Content-Length declares, or what came before the edge
  // closed the connection or deadline_ms passed.
  std::string ReadAnswer(int deadline_ms);
  // Appends what has arrived to *answer without waiting; true once *answer holds a whole answer
  // (as ReadAnswer) or the edge closed the connection.
  bool Poll(std::string* answer);

 private:
  int fd_ = -1;
};

}  // namespace toolgate::testing
