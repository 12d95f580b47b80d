// The thread behind context.fetch (egress.js): node has no synchronous HTTP client, so the
// handler's thread posts each request here and sleeps (Atomics.wait) until this thread, which
// runs an event loop of its own, has the whole answer.
//
// Every request goes to the egress gateway, a forward proxy (workerData.proxy, "127.0.0.1:PORT"):
// https through a CONNECT tunnel, TLS end to end, the certificate checked here against the
// system's CAs plus the bundle SSL_CERT_FILE names; http as one absolute-form request per
// connection. Redirects are followed, at most MAX_REDIRECTS, each hop through the gateway again.
// The gateway's refusal (403 with X-Toolgate-Egress-Refused) and its failures (502 or 504 with
// X-Toolgate-Egress-Error), also when they answer the CONNECT, become an error whose message is
// exactly the gateway's. The rules are those of services/executor/include/toolgate/executor/
// egress_fetch.h; keep the three runtimes in step.
//
// Only synchronous file reads and no DNS lookups (the gateway's address is numeric): nothing
// here starts libuv's thread pool, so the process keeps the threads it had at its kHello.
'use strict';

const fs = require('fs');
const http = require('http');
const net = require('net');
const tls = require('tls');
const {workerData} = require('worker_threads');

const MAX_REDIRECTS = 5;
const REFUSED_HEADER = 'x-toolgate-egress-refused';
const GATEWAY_ERROR_HEADER = 'x-toolgate-egress-error';
// Credentials meant for one host do not follow a redirect to another.
const CREDENTIAL_HEADERS = ['authorization', 'cookie', 'proxy-authorization'];

const {signal, port, proxy} = workerData;
const proxyHost = proxy.slice(0, proxy.lastIndexOf(':'));
const proxyPort = Number(proxy.slice(proxy.lastIndexOf(':') + 1));
const ca = trustedCertificates();

// node's own roots, plus the system's or the operator's bundle (SSL_CERT_FILE).
function trustedCertificates() {
  const file = process.env.SSL_CERT_FILE || '/etc/ssl/certs/ca-certificates.crt';
  let pem = '';
  try {
    pem = fs.readFileSync(file, 'utf8');
  } catch (e) {
    // No bundle: node's own roots only.
  }
  const extra = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) || [];
  return tls.rootCertificates.concat(extra);
}

// A failure the handler sees, with its message; timedOut: the request ran out of time (its own,
// or the call's, which the gateway answers with 504).
class FetchFailure extends Error {
  constructor(message, timedOut = false) {
    super(message);
    this.timedOut = timedOut;
  }
}

// The failure the gateway's answer means, or null when status and headers are not its word.
function gatewayError(status, headers) {
  if (status === 403 && typeof headers[REFUSED_HEADER] === 'string') {
    return new FetchFailure(headers[REFUSED_HEADER]);
  }
  if ((status === 502 || status === 504) && typeof headers[GATEWAY_ERROR_HEADER] === 'string') {
    return new FetchFailure(headers[GATEWAY_ERROR_HEADER], status === 504);
  }
  return null;
}

function flatHeaders(headers) {
  const out = {};
  for (const [name, value] of Object.entries(headers)) {
    out[name] = Array.isArray(value) ? value.join(', ') : String(value);
  }
  return out;
}

// Opens a tunnel to url's host through the gateway and starts TLS in it.
function tunnel(url, track) {
  return new Promise((resolve, reject) => {
    const target = url.hostname.replace(/^\[|\]$/g, '') + ':' + (url.port || 443);
    const req = http.request({host: proxyHost, port: proxyPort, method: 'CONNECT', path: target,
                              headers: {host: target}, agent: false});
    track(req);
    req.on('connect', (res, socket) => {
      if (res.statusCode !== 200) {
        socket.destroy();
        reject(gatewayError(res.statusCode, res.headers) || new FetchFailure(
            'the egress gateway answered CONNECT ' + target + ' with ' + res.statusCode));
        return;
      }
      const host = url.hostname.replace(/^\[|\]$/g, '');
      const secure = tls.connect({socket, host, servername: net.isIP(host) ? undefined : host, ca});
      track(secure);
      secure.once('secureConnect', () => resolve(secure));
      secure.once('error', (e) => reject(new FetchFailure('TLS: ' + e.message)));
    });
    req.on('error', reject);
    req.end();
  });
}

// One hop: the response's status, headers and body.
async function send(url, method, headers, body, maxBodyBytes, track) {
  const options = {method, headers: Object.assign({}, headers)};
  if (url.protocol === 'https:') {
    const socket = await tunnel(url, track);
    options.createConnection = () => socket;  // no agent: an agent would open its own socket
    options.path = url.pathname + url.search;
    options.host = url.hostname;
    options.port = url.port || 443;
  } else {
    options.agent = false;  // a connection of its own, closed after the request
    options.host = proxyHost;
    options.port = proxyPort;
    options.path = url.href;  // absolute form, for the gateway
    options.headers.host = url.host;
  }
  return new Promise((resolve, reject) => {
    const req = http.request(options, (res) => {
      const chunks = [];
      let size = 0;
      res.on('data', (chunk) => {
        size += chunk.length;
        if (size > maxBodyBytes) {
          req.destroy(new FetchFailure('the response from ' + url.hostname + ' is larger than ' +
                                       maxBodyBytes + ' bytes'));
          return;
        }
        chunks.push(chunk);
      });
      res.on('end', () => resolve({status: res.statusCode, headers: flatHeaders(res.headers),
                                   body: Buffer.concat(chunks)}));
      res.on('error', reject);
    });
    track(req);
    req.on('error', reject);
    req.end(body);
  });
}

async function fetchFollowing(request, track) {
  let url = new URL(request.url);
  let method = request.method;
  let headers = request.headers;
  let body = request.body;
  for (let hop = 0;; ++hop) {
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new FetchFailure('a redirect led to ' + url.protocol + ', which is not http or https');
    }
    const response = await send(url, method, headers, body, request.maxBodyBytes, track);
    const failure = gatewayError(response.status, response.headers);
    if (failure !== null) throw failure;
    const location = response.headers.location;
    if (![301, 302, 303, 307, 308].includes(response.status) || location === undefined) {
      response.url = url.href;
      return response;
    }
    if (hop === MAX_REDIRECTS) {
      throw new FetchFailure('the request to ' + new URL(request.url).hostname +
                             ' was redirected more than ' + MAX_REDIRECTS + ' times');
    }
    const next = new URL(location, url);
    // As browsers do: 303 turns anything but HEAD into GET, 301 and 302 turn POST into GET.
    if ((response.status === 303 && method !== 'HEAD') ||
        ((response.status === 301 || response.status === 302) && method === 'POST')) {
      method = 'GET';
      body = undefined;
      headers = Object.fromEntries(Object.entries(headers).filter(
          ([name]) => !/^content-(type|length|encoding|language)$/i.test(name)));
    }
    if (next.host !== url.host) {
      headers = Object.fromEntries(Object.entries(headers).filter(
          ([name]) => !CREDENTIAL_HEADERS.includes(name.toLowerCase())));
    }
    url = next;
  }
}

port.on('message', async (request) => {
  const open = [];
  const track = (thing) => open.push(thing);
  const timer = setTimeout(() => {
    for (const thing of open) {
      thing.destroy(new FetchFailure('the request to ' + new URL(request.url).hostname +
                                     ' took longer than ' + request.timeoutMs + ' ms', true));
    }
  }, request.timeoutMs);
  let reply;
  try {
    reply = {id: request.id, response: await fetchFollowing(request, track)};
  } catch (e) {
    reply = {id: request.id, timedOut: e instanceof FetchFailure && e.timedOut,
             error: e instanceof FetchFailure ? e.message :
                 'the request to ' + safeHost(request.url) + ' failed: ' + (e && e.message)};
  } finally {
    clearTimeout(timer);
    for (const thing of open) thing.destroy();
  }
  port.postMessage(reply);
  Atomics.store(signal, 0, request.id);
  Atomics.notify(signal, 0);
});

function safeHost(url) {
  try {
    return new URL(url).hostname;
  } catch (e) {
    return 'an invalid URL';
  }
}
