// tsask.mjs asks agentgate's docs MCP server a question, and a follow-up,
// with the official TypeScript SDK client (@modelcontextprotocol/sdk, pinned
// in the repo's package.json). Run by the Go tests, over Streamable HTTP:
//
//   MCP_URL=http://127.0.0.1:PORT/ask/mcp QUESTION=... node pkg/askproxy/testdata/tsask.mjs
//
// or over stdio, starting the command itself:
//
//   MCP_COMMAND=/path/to/agentgate MCP_ARGS=ask-mcp QUESTION=... node pkg/askproxy/testdata/tsask.mjs
//
// FOLLOW_UP, if set, is asked next in the first answer's session.
// It prints one line of JSON to stdout and exits 0; on error it prints the
// error to stderr and exits 1; the watchdog exits 2.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const watchdog = setTimeout(() => {
  process.stderr.write('tsask: watchdog: no result after 60 s\n');
  process.exit(2);
}, 60_000);
void watchdog;

const { MCP_URL, MCP_COMMAND, MCP_ARGS = '', QUESTION, FOLLOW_UP } = process.env;

function transport() {
  if (MCP_URL) return new StreamableHTTPClientTransport(new URL(MCP_URL));
  if (MCP_COMMAND) {
    // The server's logs go to its stderr, which the test reads on failure.
    return new StdioClientTransport({ command: MCP_COMMAND, args: MCP_ARGS.split(' ').filter(Boolean), stderr: 'inherit' });
  }
  throw new Error('MCP_URL or MCP_COMMAND is required');
}

async function ask(client, args) {
  const res = await client.callTool({ name: 'ask_docs', arguments: args });
  return { isError: !!res.isError, text: res.content?.[0]?.text ?? '', structured: res.structuredContent ?? null };
}

async function main() {
  const client = new Client({ name: 'agentgate-tsask', version: '1.0.0' });
  await client.connect(transport());
  const out = { serverName: client.getServerVersion()?.name ?? null };
  out.tools = (await client.listTools()).tools.map((t) => t.name).sort();
  out.first = await ask(client, { question: QUESTION });
  if (FOLLOW_UP && out.first.structured) {
    out.followUp = await ask(client, { question: FOLLOW_UP, session_id: out.first.structured.session_id });
  }
  await client.close();
  process.stdout.write(JSON.stringify(out) + '\n');
  process.exit(0);
}

main().catch((err) => {
  process.stderr.write(`tsask: ${err?.stack ?? err}\n`);
  process.exit(1);
});
