# The workerd peer of bench/runtimes.sh: one module worker (worker.js) that imports the JavaScript
# echo tool's handler. The port is given on the command line:
#   workerd serve bench/runtimes/workerd/config.capnp --socket-addr http=127.0.0.1:PORT
using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [(name = "echo", worker = .echoWorker)],
  sockets = [(name = "http", address = "127.0.0.1:8080", http = (), service = "echo")],
);

const echoWorker :Workerd.Worker = (
  modules = [
    (name = "worker", esModule = embed "worker.js"),
    (name = "handler", commonJsModule = embed "../echo_javascript/handler.js"),
  ],
  compatibilityDate = "2025-01-01",
);
