// Toolgate's JavaScript worker: runs one version's service_handler for one organization.
//
// The executor starts it inside a sandbox as `node --max-old-space-size=N worker.js` and speaks
// the frame protocol of services/executor/include/toolgate/executor/worker_protocol.h: requests
// on fd 3, replies on fd 4, with blocking reads, so the event loop never turns: handlers are
// synchronous, and nothing a call schedules runs after it. stdout and stderr are the execution
// log, so console.log output and stack traces land there and never in a response.
'use strict';

const fs = require('fs');
const Module = require('module');
const path = require('path');
const vm = require('vm');

const egress = require('./egress');

const REQUESTS = 3;
const REPLIES = 4;
const NONCE_BYTES = 32;
const FILENAME = 'handler.js';
// The largest kNotice payload after its nonce (worker_protocol.h, kMaxNoticePayloadBytes); the
// executor drops what is past its own, smaller bounds.
const MAX_NOTICE_BYTES = 6 * (16 << 10) + 1024;
// kWorkerNoticeCap: past this many notices of a call whose payload the executor's size bound
// (16 KiB) surely takes, its count bound drops every one, so only a count is kept.
const NOTICE_CAP = 100;
const NOTICE_SIZE = 16 << 10;
const LEVELS = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'];

function readExact(n) {
  const buf = Buffer.allocUnsafe(n);
  let off = 0;
  while (off < n) {
    let got;
    try {
      got = fs.readSync(REQUESTS, buf, off, n - off, null);
    } catch (e) {
      if (e.code === 'EAGAIN' || e.code === 'EINTR') continue;
      throw e;
    }
    if (got === 0) process.exit(0);  // the executor is done with this worker
    off += got;
  }
  return buf;
}

// A request: its kind, its nonce (which every frame answering it repeats) and its JSON.
function readFrame() {
  const header = readExact(5);
  const payload = readExact(header.readUInt32LE(0));
  return {kind: String.fromCharCode(header[4]), nonce: payload.subarray(0, NONCE_BYTES),
          payload: payload.subarray(NONCE_BYTES)};
}

function writeAll(buf) {
  let off = 0;
  while (off < buf.length) {
    try {
      off += fs.writeSync(REPLIES, buf, off, buf.length - off);
    } catch (e) {
      if (e.code !== 'EAGAIN' && e.code !== 'EINTR') throw e;
    }
  }
}

function writeFrame(kind, nonce, payload) {
  const header = Buffer.alloc(5);
  header.writeUInt32LE(nonce.length + payload.length, 0);
  header[4] = kind.charCodeAt(0);
  writeAll(Buffer.concat([header, nonce, payload]));
}

// A call's context.progress and context.log: kNotice frames under the call's nonce, written at
// once (handlers are synchronous, so nothing else writes meanwhile), only while the call runs and
// only when its caller wants them (else nothing is built). The executor bounds them.
class Notices {
  constructor(nonce, wanted) {
    this.nonce = nonce;
    this.open = wanted;
    this.capped = 0;  // notices sent that count towards NOTICE_CAP
    this.dropped = 0;  // notices dropped here, for the executor to count
  }

  // The call is over: what was dropped is told (before the answer), and a handler that kept its
  // context sends nothing more, which could only be taken for a forged frame of a later call.
  close() {
    if (this.open && this.dropped > 0) {
      writeFrame('N', this.nonce,
                 Buffer.from(JSON.stringify({kind: 'dropped', count: this.dropped})));
    }
    this.open = false;
  }

  // Whether a notice is worth building now; counts it as dropped when past the cap.
  wanted() {
    if (!this.open) return false;
    if (this.capped >= NOTICE_CAP) {
      this.dropped++;
      return false;
    }
    return true;
  }

  send(text) {
    const payload = Buffer.from(text, 'utf8');
    if (payload.length > MAX_NOTICE_BYTES) {
      this.dropped++;  // past every bound the executor has
      return;
    }
    if (payload.length <= NOTICE_SIZE) this.capped++;
    writeFrame('N', this.nonce, payload);
  }

  progress(progress, total, message) {
    if (typeof progress !== 'number' || !Number.isFinite(progress)) {
      throw new TypeError('progress: progress must be a finite number');
    }
    const hasTotal = total !== undefined && total !== null;
    if (hasTotal && (typeof total !== 'number' || !Number.isFinite(total))) {
      throw new TypeError('progress: total must be a finite number, undefined or null');
    }
    const hasMessage = message !== undefined && message !== null;
    if (hasMessage && typeof message !== 'string') {
      throw new TypeError('progress: message must be a string, undefined or null');
    }
    if (!this.wanted()) return;
    const notice = {kind: 'progress', progress: progress};
    if (hasTotal) notice.total = total;
    if (hasMessage && message !== '') notice.message = message;
    this.send(JSON.stringify(notice));
  }

  log(level, data, logger) {
    if (typeof level !== 'string' || !LEVELS.includes(level)) {
      throw new TypeError('log: level must be one of ' + LEVELS.join(', ') + '; got ' +
                          safely(() => JSON.stringify(level), String(typeof level)));
    }
    const hasLogger = logger !== undefined && logger !== null;
    if (hasLogger && typeof logger !== 'string') {
      throw new TypeError('log: logger must be a string, undefined or null');
    }
    if (!this.wanted()) return;
    let dataText;
    try {
      dataText = JSON.stringify(data);
    } catch (e) {
      throw new TypeError('log: data cannot be encoded as JSON: ' + safely(() => e.message, ''));
    }
    // What JSON has no text for (undefined, a function) is null, as it would be in an array.
    const head = {kind: 'log', level: level};
    if (hasLogger && logger !== '') head.logger = logger;
    const text = JSON.stringify(head);
    const json = dataText === undefined ? 'null' : dataText;
    this.send(text.slice(0, -1) + ',"data":' + json + '}');
  }
}

function errorPayload(errorType, errorMessage) {
  return Buffer.from(JSON.stringify({errorType: String(errorType), errorMessage: String(errorMessage)}));
}

// Reads a property of a thrown value, whatever the value is (a getter may throw too).
function safely(read, fallback) {
  try {
    const value = read();
    return value === undefined || value === null ? fallback : value;
  } catch (e) {
    return fallback;
  }
}

class Worker {
  constructor(init) {
    this.memoryMb = init.memory_mb;
    this.maxResultBytes = init.max_result_bytes;
    this.baseEnv = Object.assign({}, process.env);
    this.handler = null;
  }

  // Runs the module's code as a CommonJS module, as if it were the file at filename. Returns
  // null, or a kError payload.
  load(code, filename = FILENAME) {
    const inBundle = filename !== FILENAME;
    const module = {exports: {}, filename: filename, id: filename, loaded: false};
    const exports = module.exports;
    // Like Node's own module wrapper, plus a look at a top-level `function service_handler`,
    // which CommonJS keeps local to the module. The user's line numbers are kept.
    const source = '(function (exports, require, module, __filename, __dirname) {' + code +
        '\n;return typeof service_handler === "function" ? service_handler : undefined;\n})';
    let topLevel;
    try {
      const wrapper = vm.runInThisContext(source, {filename: filename});
      topLevel = wrapper.call(exports, exports,
                              Module.createRequire(inBundle ? filename : '/' + FILENAME), module,
                              filename, inBundle ? path.dirname(filename) : '/');
    } catch (e) {
      return this.exceptionPayload(e);
    }
    module.loaded = true;
    const handler = safely(() => module.exports.service_handler, undefined) ||
        safely(() => exports.service_handler, undefined) || topLevel;
    if (typeof handler !== 'function') {
      return errorPayload('HandlerNotFound',
                          'no function service_handler(event, context) is exported or defined');
    }
    this.handler = handler;
    return null;
  }

  exceptionPayload(e) {
    const isObject = e !== null && (typeof e === 'object' || typeof e === 'function');
    const message = isObject ? safely(() => String(e.message), '') : safely(() => String(e), '');
    if (e instanceof RangeError && /allocation failed/i.test(message)) {
      return errorPayload('MemoryLimitExceeded',
                          'the handler exceeded its memory limit of ' + this.memoryMb + ' MB');
    }
    const stack = isObject ? safely(() => e.stack, null) : null;
    process.stderr.write((typeof stack === 'string' ? stack : 'Uncaught ' + message) + '\n');
    const type = isObject ? safely(() => e.constructor.name, 'Error') : 'Error';
    return errorPayload(type || 'Error', message);
  }

  call(request, nonce) {
    const env = request.env;
    const context = Object.assign({}, request.context, {env: Object.assign({}, env)});
    // The platform's facilities, not enumerable: the context's keys stay the contract's.
    const deadline = performance.now() + Number(request.context.deadline_ms || 0);
    Object.defineProperty(context, 'fetch', {value: egress.fetchFor(deadline, this.memoryMb)});
    Object.defineProperty(context, 'EgressError', {value: egress.EgressError});
    const notices = new Notices(nonce, request.notices === true);
    Object.defineProperty(context, 'progress', {
      value: (progress, total, message) => notices.progress(progress, total, message),
    });
    Object.defineProperty(context, 'log', {
      value: (level, data, logger) => notices.log(level, data, logger),
    });
    Object.assign(process.env, env);
    let result;
    try {
      result = this.handler(request.event, context);
    } catch (e) {
      return ['E', this.exceptionPayload(e)];
    } finally {
      notices.close();
      this.restoreEnv();
    }
    return this.encode(result);
  }

  // The call's secrets, and anything the handler set, leave process.env.
  restoreEnv() {
    for (const name of Object.keys(process.env)) {
      if (!Object.prototype.hasOwnProperty.call(this.baseEnv, name)) delete process.env[name];
    }
    for (const [name, value] of Object.entries(this.baseEnv)) {
      if (process.env[name] !== value) process.env[name] = value;
    }
  }

  encode(result) {
    let text;
    try {
      const isObject = result !== null && (typeof result === 'object' || typeof result === 'function');
      if (isObject && typeof result.then === 'function') {
        // Keep a rejection of the abandoned Promise from ever being reported.
        safely(() => result.then(undefined, () => {}), null);
        return ['E', errorPayload('AsyncHandlerNotSupported',
                                  'service_handler returned a Promise; JavaScript handlers must ' +
                                      'be synchronous (no async/await)')];
      }
      text = JSON.stringify(result);
    } catch (e) {
      if (e instanceof RangeError && /allocation failed/i.test(safely(() => e.message, ''))) {
        return ['E', this.exceptionPayload(e)];
      }
      return ['E', errorPayload('InvalidResult', 'the handler\'s return value cannot be encoded ' +
                                                     'as JSON: ' + safely(() => e.message, ''))];
    }
    const data = Buffer.from(text === undefined ? 'null' : text, 'utf8');
    if (data.length > this.maxResultBytes) {
      return ['E', errorPayload('ResponseTooLarge',
                                'the handler\'s return value is larger than the response limit')];
    }
    return ['V', data];
  }
}

// A bundle version's entry file, loaded from its real path: require resolves relative paths
// from it and node_modules directories from its directory up to the bundle's root.
function loadBundle(worker, root, handler) {
  const entry = path.join(root, handler);
  let code;
  try {
    code = fs.readFileSync(entry, 'utf8');
  } catch (e) {
    return errorPayload('HandlerNotFound',
                        'cannot read the bundle\'s entry file ' + handler + ': ' + e.code);
  }
  return worker.load(code, entry);
}

// The sealed runtime: no module from node's global directories ($HOME/.node_modules,
// $HOME/.node_libraries, <prefix>/lib/node, NODE_PATH). Node keeps them in a private list that
// every bare require searches after the node_modules directories, so each lookup drops them.
function sealGlobalPaths() {
  const globalPaths = new Set(Module.globalPaths);
  const lookup = Module._resolveLookupPaths;
  Module._resolveLookupPaths = function(request, parent) {
    const paths = lookup.call(this, request, parent);
    return Array.isArray(paths) ? paths.filter((p) => !globalPaths.has(p)) : paths;
  };
  Module.globalPaths.length = 0;
}

function main() {
  sealGlobalPaths();
  // The fetch thread first (a sandbox with egress only), so that it is among the threads the
  // executor counts at kHello and a call that uses it does not retire the worker.
  egress.start();
  // Up, and nothing of a tool has run: the executor counts this process's threads now.
  writeFrame('H', Buffer.alloc(0), Buffer.alloc(0));
  const first = readFrame();
  if (first.kind !== 'I') process.exit(2);
  const init = JSON.parse(first.payload.toString('utf8'));
  const worker = new Worker(init);
  const empty = Buffer.alloc(0);
  writeFrame('S', first.nonce, empty);  // the module's code runs now
  const failure = init.bundle_root ? loadBundle(worker, init.bundle_root, init.handler) :
                                     worker.load(init.code);
  if (failure !== null) {
    writeFrame('L', first.nonce, failure);
    process.exit(0);
  }
  writeFrame('R', first.nonce, empty);
  for (;;) {
    const frame = readFrame();
    if (frame.kind !== 'C') process.exit(2);
    let request;
    try {
      request = JSON.parse(frame.payload.toString('utf8'));
    } catch (e) {
      // The platform's failure, before the handler: not the tool's to pay for.
      writeFrame('E', frame.nonce, errorPayload('WorkerDecodeError',
                                                'the worker could not decode the call'));
      continue;
    }
    writeFrame('S', frame.nonce, empty);  // the handler's code runs now
    const [kind, reply] = worker.call(request, frame.nonce);
    writeFrame(kind, frame.nonce, reply);
  }
}

main();
