// toolgate-lua-worker: the Lua worker process (see lua_worker.h). The executor starts it in a
// sandbox, with the protocol on fds 3 and 4 and the execution log on fd 1.
#include "toolgate/executor/lua_worker.h"

int main() {
  // Read once, before the first frame: the environment is the sandbox's, set by the executor.
  return toolgate::executor::ServeLuaWorker(3, 4, 1,
                                            toolgate::executor::EgressConfigFromEnvironment());
}
