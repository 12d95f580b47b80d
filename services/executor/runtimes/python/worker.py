"""Toolgate's Python worker: runs one version's service_handler for one organization.

The executor starts it inside a sandbox as `python3 -I -B -u worker.py` and speaks the frame
protocol of services/executor/include/toolgate/executor/worker_protocol.h: requests on fd 3,
replies on fd 4. Its stdout and stderr are the execution log, so print() and tracebacks land
there and never in a response. It serves one call at a time, for as long as the executor keeps
it; the executor kills it at a deadline or when it recycles it.
"""

import importlib.util
import json
import linecache
import math
import os
import struct
import sys
import threading
import traceback
import time
import types

REQUESTS = 3
REPLIES = 4
HEADER = struct.Struct("<IB")
NONCE_BYTES = 32
FILENAME = "handler.py"
# The largest kNotice payload after its nonce (worker_protocol.h, kMaxNoticePayloadBytes); the
# executor drops what is past its own, smaller bounds.
MAX_NOTICE_BYTES = 6 * (16 << 10) + 1024
# kWorkerNoticeCap: past this many notices of a call whose payload the executor's size bound
# (16 KiB) surely takes, its count bound drops every one, so only a count is kept.
NOTICE_CAP = 100
NOTICE_SIZE = 16 << 10
LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
# One frame at a time on fd 4: a handler's thread may report while the call's answer is written.
WRITE_LOCK = threading.Lock()


def read_exact(n):
    chunks = []
    while n:
        chunk = os.read(REQUESTS, min(n, 1 << 20))
        if not chunk:
            os._exit(0)  # the executor closed the pipe: it is done with this worker
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def read_frame():
    """A request: its kind, its nonce (which every frame answering it repeats), its JSON."""
    length, kind = HEADER.unpack(read_exact(HEADER.size))
    payload = read_exact(length)
    return chr(kind), payload[:NONCE_BYTES], payload[NONCE_BYTES:]


def write_frame(kind, nonce, payload=b""):
    view = memoryview(HEADER.pack(len(nonce) + len(payload), ord(kind)) + nonce + payload)
    with WRITE_LOCK:
        while view:
            view = view[os.write(REPLIES, view):]


def is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


class Notices:
    """A call's context.progress and context.log: kNotice frames under the call's nonce, sent
    at once, only while the call runs and only when its caller wants them (else nothing is
    built). The executor bounds them; what it drops costs it a few comparisons."""

    def __init__(self, nonce, wanted):
        self.nonce = nonce
        self.open = wanted
        self.capped = 0  # notices sent that count towards NOTICE_CAP
        self.dropped = 0  # notices dropped here, for the executor to count

    def close(self):
        """The call is over: what was dropped is told (before the answer), and a handler that
        kept its context (or a thread) sends nothing more, which could only be taken for a
        forged frame of a later call."""
        with WRITE_LOCK:
            if self.open and self.dropped:
                payload = json.dumps({"kind": "dropped", "count": self.dropped}).encode()
                self.write(payload)
            self.open = False

    def write(self, payload):
        """One kNotice frame; the caller holds WRITE_LOCK."""
        view = memoryview(HEADER.pack(len(self.nonce) + len(payload), ord("N")) + self.nonce +
                          payload)
        while view:
            view = view[os.write(REPLIES, view):]

    def wanted(self):
        """Whether a notice is worth building now; counts it as dropped when past the cap."""
        if not self.open:
            return False
        if self.capped >= NOTICE_CAP:
            self.dropped += 1
            return False
        return True

    def send(self, notice):
        try:
            payload = json.dumps(notice, ensure_ascii=False, allow_nan=False,
                                 separators=(",", ":")).encode("utf-8", "replace")
        except (TypeError, ValueError, RecursionError) as e:
            raise TypeError("log: data cannot be encoded as JSON: %s" % e) from None
        with WRITE_LOCK:
            if not self.open:
                return
            if len(payload) > MAX_NOTICE_BYTES:
                self.dropped += 1  # past every bound the executor has
                return
            if len(payload) <= NOTICE_SIZE:
                self.capped += 1
            self.write(payload)

    def progress(self, progress, total=None, message=None):
        if not is_number(progress) or not math.isfinite(progress):
            raise TypeError("progress: progress must be a finite number")
        if total is not None and (not is_number(total) or not math.isfinite(total)):
            raise TypeError("progress: total must be a finite number or None")
        if message is not None and not isinstance(message, str):
            raise TypeError("progress: message must be a string or None")
        if not self.wanted():
            return
        notice = {"kind": "progress", "progress": progress}
        if total is not None:
            notice["total"] = total
        if message:
            notice["message"] = message
        self.send(notice)

    def log(self, level, data, logger=None):
        if level not in LEVELS:
            raise ValueError("log: level must be one of %s; got %r" % (", ".join(LEVELS), level))
        if logger is not None and not isinstance(logger, str):
            raise TypeError("log: logger must be a string or None")
        if not self.wanted():
            return
        notice = {"kind": "log", "level": level, "data": data}
        if logger:
            notice["logger"] = logger
        self.send(notice)


def error_payload(error_type, message):
    return json.dumps({"errorType": error_type, "errorMessage": message}).encode()


def load_toolgate():
    """The `toolgate` module handlers import (toolgate.py beside this file), registered by name:
    -I keeps this directory off sys.path, where nothing else of the runtime should be found."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "toolgate.py")
    spec = importlib.util.spec_from_file_location("toolgate", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["toolgate"] = module
    spec.loader.exec_module(module)
    return module


toolgate = load_toolgate()


class Context(dict):
    """The context of contract section 3: a dict whose keys also read as attributes, plus the
    platform's facilities as methods (not keys, so the dict stays the contract's JSON)."""

    EgressError = toolgate.EgressError

    def __init__(self, fields, deadline, notices):
        super().__init__(fields)
        self._deadline = deadline  # time.monotonic() at which the executor stops the call
        self._notices = notices

    def fetch(self, url, method="GET", headers=None, body=None, timeout_ms=None):
        """toolgate.fetch, bounded by the call's deadline."""
        return toolgate.fetch(url, method=method, headers=headers, body=body,
                              timeout_ms=timeout_ms, deadline=self._deadline)

    def progress(self, progress, total=None, message=None):
        """Reports progress to the caller (numbers; total and message optional). Returns at
        once; sends nothing unless the caller asked for notices."""
        self._notices.progress(progress, total, message)

    def log(self, level, data, logger=None):
        """Sends a log message to the caller: level one of LEVELS, data any JSON value."""
        self._notices.log(level, data, logger)

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


class Worker:
    def __init__(self, init):
        self.memory_mb = init["memory_mb"]
        self.max_result_bytes = init["max_result_bytes"]
        self.base_env = dict(os.environ)
        self.handler = None

    def load(self, code, filename=FILENAME):
        """Runs the module's code as module "handler". Returns None, or a kError payload."""
        module = types.ModuleType("handler")
        module.__file__ = filename
        sys.modules["handler"] = module
        if filename == FILENAME:
            # Tracebacks show the handler's source lines (a bundle's are files linecache reads).
            linecache.cache[FILENAME] = (len(code), None, code.splitlines(True), FILENAME)
        try:
            exec(compile(code, filename, "exec"), module.__dict__)
        except BaseException as e:  # noqa: B036 - SystemExit at import time is an error too
            return self.exception_payload(e)
        handler = module.__dict__.get("service_handler")
        if not callable(handler):
            return error_payload(
                "HandlerNotFound",
                "no module-level function service_handler(event, context) is defined")
        self.handler = handler
        return None

    def exception_payload(self, e):
        if isinstance(e, MemoryError):
            return error_payload(
                "MemoryLimitExceeded",
                "the handler exceeded its memory limit of %d MB" % self.memory_mb)
        # The traceback, without the worker's own frame, goes to the log only.
        traceback.print_exception(type(e), e, e.__traceback__.tb_next, file=sys.stderr)
        try:
            message = str(e)
        except Exception:
            message = ""
        return error_payload(type(e).__name__, message)

    def call(self, request, nonce):
        env = request["env"]
        deadline = time.monotonic() + request["context"].get("deadline_ms", 0) / 1000.0
        notices = Notices(nonce, bool(request.get("notices")))
        context = Context(request["context"], deadline, notices)
        context["env"] = dict(env)
        os.environ.update(env)
        try:
            result = self.handler(request["event"], context)
        except BaseException as e:  # noqa: B036 - a handler's sys.exit() is its error
            return "E", self.exception_payload(e)
        finally:
            notices.close()
            # The call's secrets, and anything the handler set, leave the environment.
            if os.environ != self.base_env:
                os.environ.clear()
                os.environ.update(self.base_env)
            reap()
        return self.encode(result)

    def encode(self, result):
        try:
            text = json.dumps(result, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
        except (TypeError, ValueError, RecursionError) as e:
            return "E", error_payload(
                "InvalidResult", "the handler's return value cannot be encoded as JSON: %s" % e)
        except MemoryError as e:
            return "E", self.exception_payload(e)
        data = text.encode("utf-8", "replace")  # a lone surrogate becomes "?"
        if len(data) > self.max_result_bytes:
            return "E", error_payload(
                "ResponseTooLarge",
                "the handler's return value is larger than the response limit")
        return "V", data


def reap():
    """Collects the exit status of processes the handler started that have ended. The worker is
    the sandbox's init (pid 1), so orphans become its children. Killing what still runs is the
    executor's job, from outside the sandbox, where a handler cannot switch it off."""
    try:
        while os.waitpid(-1, os.WNOHANG)[0] > 0:
            pass
    except ChildProcessError:
        pass  # no children: the common case costs one system call


def add_virtual_environment():
    """-S keeps the host's site-packages off sys.path. A virtual environment given as the
    interpreter (a GPU pool's libraries) is the operator's choice: its site-packages are added."""
    home = os.path.dirname(os.path.dirname(sys.executable))
    if os.path.exists(os.path.join(home, "pyvenv.cfg")):
        import site
        site.main()


def load_bundle(worker, root, handler):
    """Loads a bundle version's entry file from its real path, with the bundle's root and the
    entry's directory first on sys.path, so that `import pkg` finds the packages it vendors."""
    entry = os.path.join(root, handler)
    for directory in (root, os.path.dirname(entry)):
        if directory not in sys.path:
            sys.path.insert(0, directory)
    try:
        with open(entry, "rb") as f:
            code = f.read()
    except OSError as e:
        return error_payload("HandlerNotFound", "cannot read the bundle's entry file %s: %s"
                             % (handler, e.strerror))
    return worker.load(code, entry)


def main():
    add_virtual_environment()
    write_frame("H", b"")  # up, and nothing of a tool has run: the executor counts our threads
    kind, nonce, payload = read_frame()
    if kind != "I":
        sys.exit(2)
    init = json.loads(payload)
    worker = Worker(init)
    write_frame("S", nonce)  # the module's code runs now
    if init.get("bundle_root"):
        failure = load_bundle(worker, init["bundle_root"], init["handler"])
    else:
        failure = worker.load(init["code"])
    del init, payload
    if failure is not None:
        write_frame("L", nonce, failure)
        return
    write_frame("R", nonce)
    while True:
        kind, nonce, payload = read_frame()
        if kind != "C":
            sys.exit(2)
        try:
            request = json.loads(payload)
        except BaseException as e:  # noqa: B036 - the platform's failure, before the handler
            write_frame("E", nonce, error_payload(
                "WorkerDecodeError", "the worker could not decode the call: %s" % type(e).__name__))
            continue
        del payload
        write_frame("S", nonce)  # the handler's code runs now
        reply_kind, reply = worker.call(request, nonce)
        del request
        write_frame(reply_kind, nonce, reply)


if __name__ == "__main__":
    main()
