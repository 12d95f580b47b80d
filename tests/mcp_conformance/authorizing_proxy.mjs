// A forwarding proxy for clients that cannot send an API key (the conformance suite): every
// request to it goes to `target` with `Authorization: <key>` added and everything else (method,
// path, headers, Host and Origin included, body) passed on unchanged, and the answer comes back
// as it is, streamed. Listens on 127.0.0.1, a free port.
import http from 'node:http';

export async function startAuthorizingProxy(target, key) {
  const upstream = new URL(target);
  const server = http.createServer((request, response) => {
    const headers = { ...request.headers, authorization: key };
    const forwarded = http.request(
      { host: upstream.hostname, port: upstream.port, method: request.method, path: request.url, headers },
      (answer) => {
        response.writeHead(answer.statusCode, answer.headers);
        answer.pipe(response);
      },
    );
    forwarded.on('error', (error) => {
      response.writeHead(502, { 'content-type': 'text/plain' });
      response.end(`proxy: ${error.message}`);
    });
    request.pipe(forwarded);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://localhost:${server.address().port}`,
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(resolve); }),
  };
}
