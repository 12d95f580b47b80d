// context.fetch for JavaScript handlers: a synchronous HTTP client through the egress gateway.
//
// Handlers are synchronous and node has no synchronous HTTP client, so each request runs on a
// worker thread (fetch_thread.js) with its own event loop, while the handler's thread sleeps in
// Atomics.wait on a SharedArrayBuffer until the answer is there, then takes it with
// receiveMessageOnPort (no event loop needed on this side).
//
// The thread is started once, with the process, before its kHello (worker.js): the executor
// retires a worker whose thread count grew during a call, and a sandbox with egress should stay
// warm between calls that use it. A sandbox without egress starts no thread and pays nothing.
'use strict';

const path = require('path');
const {MessageChannel, Worker, receiveMessageOnPort} = require('worker_threads');

const NO_EGRESS = 'egress is not available in this sandbox';
const DEFAULT_TIMEOUT_MS = 30000;
// How much longer than the request's own timeout the handler's thread waits for the fetch thread
// (which enforces that timeout itself) before giving up on it.
const WAIT_GRACE_MS = 2000;

// Marks an error that means the call's deadline cut the request.
const ENDS_CALL = Symbol('endsCall');

class EgressError extends Error {
  constructor(message) {
    super(message);
    this.name = 'EgressError';
  }
}

class FetchThread {
  // proxy: "127.0.0.1:PORT".
  constructor(proxy) {
    this.signal = new Int32Array(new SharedArrayBuffer(4));
    const {port1, port2} = new MessageChannel();
    this.port = port1;
    this.lastId = 0;
    this.worker = new Worker(path.join(__dirname, 'fetch_thread.js'), {
      workerData: {signal: this.signal, port: port2, proxy},
      transferList: [port2],
      resourceLimits: {maxOldGenerationSizeMb: 32},
      stdout: true,  // nothing of the thread's reaches the log: it prints nothing
      stderr: true,
    });
    this.worker.unref();
  }

  // One request; deadline is the call's (performance.now() milliseconds), maxBodyBytes the
  // largest response body taken. Returns the response {status, headers, body (Buffer), url};
  // throws EgressError, or TypeError for a bad argument.
  send(url, init, deadline, maxBodyBytes) {
    const id = ++this.lastId;
    const request = toRequest(url, init);
    let timeoutMs = init.timeout_ms !== undefined ? Number(init.timeout_ms) : DEFAULT_TIMEOUT_MS;
    if (!(timeoutMs > 0)) throw new TypeError('fetch: timeout_ms must be a positive number');
    // Whether the call's deadline, not the handler's timeout_ms, is what limits the request.
    const capped = deadline - performance.now() <= timeoutMs;
    timeoutMs = Math.min(timeoutMs, Math.floor(deadline - performance.now()));
    if (!(timeoutMs > 0)) throw new EgressError('the call has no time left for a request');
    request.id = id;
    request.timeoutMs = timeoutMs;
    request.maxBodyBytes = maxBodyBytes;
    this.port.postMessage(request);
    const until = performance.now() + timeoutMs + WAIT_GRACE_MS;
    for (;;) {
      // Answers to requests given up on earlier are dropped.
      let message;
      while ((message = receiveMessageOnPort(this.port)) !== undefined) {
        if (message.message.id !== id) continue;
        const reply = message.message;
        if (reply.error !== undefined) {
          const error = new EgressError(reply.error);
          if (reply.timedOut && capped) error[ENDS_CALL] = true;
          throw error;
        }
        reply.response.body = Buffer.from(reply.response.body);
        return reply.response;
      }
      const left = until - performance.now();
      if (left <= 0) throw new EgressError('the request to ' + request.host + ' got no answer');
      Atomics.wait(this.signal, 0, Atomics.load(this.signal, 0), left);
    }
  }
}

// Checks url and init and makes the message for the thread.
function toRequest(url, init) {
  let parsed;
  try {
    parsed = new URL(String(url));
  } catch (e) {
    throw new TypeError('fetch: not an absolute http:// or https:// URL');
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new TypeError('fetch: not an absolute http:// or https:// URL');
  }
  const method = String(init.method || 'GET').toUpperCase();
  const headers = {};
  for (const [name, value] of Object.entries(init.headers || {})) headers[name] = String(value);
  let body = init.body;
  if (body !== undefined && body !== null && typeof body !== 'string' &&
      !(body instanceof Uint8Array)) {
    body = JSON.stringify(body);  // an object or an array: JSON
    if (!Object.keys(headers).some((name) => name.toLowerCase() === 'content-type')) {
      headers['content-type'] = 'application/json';
    }
  }
  return {url: parsed.href, host: parsed.hostname, method, headers,
          body: body === null ? undefined : body};
}

// The response a handler sees.
function toResponse(response) {
  const body = response.body;
  return {
    status: response.status,
    headers: response.headers,
    url: response.url,
    body,
    text() {
      return body.toString('utf8');
    },
    json() {
      return JSON.parse(body.toString('utf8'));
    },
  };
}

let thread = null;

// Starts the fetch thread when the sandbox has egress. Call before kHello.
function start() {
  const proxy = process.env.TOOLGATE_EGRESS_PROXY;
  if (proxy) thread = new FetchThread(proxy);
}

// How close to the call's deadline a failed request counts as cut by it: the worker knows the
// deadline only to within the time its call took to arrive.
const DEADLINE_SLACK_MS = 50;

// The call's deadline has come: the executor is stopping this process. Waiting for it, rather
// than throwing, keeps the outcome what the deadline makes it (408, not charged) whichever of
// the gateway's 504, the request's timeout or the executor's stop comes first.
function waitForTheEnd() {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
}

// context.fetch(url, init) for a call whose deadline is `deadline` (performance.now() ms) and
// whose memory limit is memoryMb (no response body may be larger). A request still running at
// the deadline ends with the call.
function fetchFor(deadline, memoryMb) {
  return function fetch(url, init) {
    if (thread === null) throw new EgressError(NO_EGRESS);
    try {
      return toResponse(thread.send(url, init || {}, deadline, memoryMb * 1024 * 1024));
    } catch (e) {
      if (e instanceof EgressError &&
          (e[ENDS_CALL] || performance.now() >= deadline - DEADLINE_SLACK_MS)) {
        waitForTheEnd();
      }
      throw e;
    }
  };
}

module.exports = {EgressError, start, fetchFor};
