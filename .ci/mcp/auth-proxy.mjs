// auth-proxy forwards every request to maestro's MCP endpoint with an agent
// key added as a Bearer header. The conformance suite's client sends no
// headers, and maestro's /mcp never runs without a key, in any mode; so the
// suite talks to this proxy. Everything else, Host included, is forwarded
// as it came, so the DNS-rebinding scenario still reaches maestro with the
// Host it chose.
//
// Usage: node auth-proxy.mjs UPSTREAM-ORIGIN AGENT-KEY
// Prints the port it listens on (127.0.0.1), then serves until killed.
import http from "node:http";

const [upstream, key] = process.argv.slice(2);
if (!upstream || !key) {
  console.error("usage: node auth-proxy.mjs UPSTREAM-ORIGIN AGENT-KEY");
  process.exit(2);
}
const target = new URL(upstream);

const server = http.createServer((req, res) => {
  const headers = { ...req.headers };
  if (!headers.authorization) {
    headers.authorization = `Bearer ${key}`;
  }
  const up = http.request(
    { host: target.hostname, port: target.port, method: req.method, path: req.url, headers },
    (upRes) => {
      res.writeHead(upRes.statusCode ?? 502, upRes.headers);
      upRes.pipe(res);
    },
  );
  up.on("error", (err) => {
    if (!res.headersSent) {
      res.writeHead(502, { "content-type": "text/plain" });
    }
    res.end(`auth-proxy: ${err.message}\n`);
  });
  req.pipe(up);
});
server.listen(0, "127.0.0.1", () => console.log(server.address().port));
