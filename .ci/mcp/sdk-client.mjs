// An MCP client built on the official TypeScript SDK, as an agent
// framework connects one: StreamableHTTPClientTransport with the agent's
// Bearer header, which opens the standalone SSE stream once initialized
// and holds it for as long as it is connected.
//
// It prints one line per event on stdout, for run.sh to wait on:
//   stream-open            the standalone stream is held
//   calling                the tool call below was sent
//   stream-ended           the server ended the stream (not a cut connection)
//   result <observation>   the call's answer
// and exits 0 once the call was answered, 1 if it failed.
//
// Usage: node sdk-client.mjs MCP-URL AGENT-KEY SESSION TOOL ARGS-JSON
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, key, session, tool, args] = process.argv.slice(2);
const say = (line) => process.stdout.write(line + "\n");

// observed marks when the standalone stream (the only GET the client
// sends) opens and when the server ends it.
async function observed(input, init) {
  const res = await fetch(input, init);
  if ((init?.method ?? "GET") !== "GET" || !res.ok || !res.body) {
    return res;
  }
  say("stream-open");
  const body = res.body.pipeThrough(new TransformStream({ flush: () => say("stream-ended") }));
  return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
}

const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${key}`, "X-Call-Id": session } },
  fetch: observed,
});
const client = new Client({ name: "maestro-ci-shutdown", version: "1.0.0" });
// Reconnecting to a server that has stopped fails, as it should.
client.onerror = () => {};
try {
  await client.connect(transport);
  say("calling");
  const res = await client.callTool({ name: tool, arguments: JSON.parse(args) });
  say("result " + JSON.stringify(res.structuredContent ?? res));
  await client.close().catch(() => {});
  process.exit(res.isError ? 1 : 0);
} catch (err) {
  console.error("sdk client: " + (err?.stack ?? err));
  process.exit(1);
}
