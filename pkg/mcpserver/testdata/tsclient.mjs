// tsclient.mjs drives agentgate's MCP server with the official TypeScript SDK
// client (@modelcontextprotocol/sdk, pinned in the repo's package.json) over
// the Streamable HTTP transport. It is run by the Go interop test:
//
//   MCP_URL=http://127.0.0.1:PORT/mcp MCP_TOKEN=... AGENT_ID=... \
//     node pkg/mcpserver/testdata/tsclient.mjs
//
// Optional env: INSTRUCTION (default "echo hello from typescript"),
// CONSENT = accept | decline | cancel (default accept).
//
// On success it prints exactly one line of JSON to stdout and exits 0.
// On error it prints the error to stderr and exits 1; the overall watchdog
// exits 2. Transport-level errors that the SDK reports but recovers from
// (e.g. a dropped SSE stream it then resumes) go to stderr as warnings.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const WATCHDOG_MS = 90_000;
const POLL_INTERVAL_MS = 250;
const POLL_MAX = 60;
const TERMINAL = new Set(['completed', 'failed', 'canceled', 'rejected']);

const watchdog = setTimeout(() => {
  process.stderr.write(`tsclient: watchdog: no result after ${WATCHDOG_MS} ms\n`);
  process.exit(2);
}, WATCHDOG_MS);
// Deliberately not unref'd: every path ends in process.exit, and a ref'd timer
// keeps a stalled run from exiting 0 silently with nothing printed.
void watchdog;

function env(name, def) {
  const v = process.env[name];
  if (v === undefined || v === '') {
    if (def === undefined) throw new Error(`environment variable ${name} is required`);
    return def;
  }
  return v;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function writeStdout(line) {
  return new Promise((resolve, reject) => {
    process.stdout.write(line + '\n', (err) => (err ? reject(err) : resolve()));
  });
}

async function main() {
  const mcpUrl = env('MCP_URL');
  const token = env('MCP_TOKEN');
  const agentId = env('AGENT_ID');
  const instruction = env('INSTRUCTION', 'echo hello from typescript');
  const consent = env('CONSENT', 'accept');
  if (!['accept', 'decline', 'cancel'].includes(consent)) {
    throw new Error(`CONSENT must be accept, decline or cancel, got ${JSON.stringify(consent)}`);
  }

  const client = new Client(
    { name: 'agentgate-ts-test', version: '1.0.0' },
    { capabilities: { elicitation: {} } },
  );
  client.onerror = (err) => {
    process.stderr.write(`tsclient: transport warning: ${err?.stack ?? err}\n`);
  };

  let elicitations = 0;
  let elicitationMessage = null;
  let elicitationSchema = null;
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    elicitations++;
    if (elicitations === 1) {
      elicitationMessage = request.params.message ?? null;
      elicitationSchema = request.params.requestedSchema ?? null;
    }
    if (consent === 'accept') return { action: 'accept', content: { approve: true } };
    return { action: consent };
  });

  const transport = new StreamableHTTPClientTransport(new URL(mcpUrl), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
    reconnectionOptions: {
      initialReconnectionDelay: 200,
      maxReconnectionDelay: 2000,
      reconnectionDelayGrowFactor: 1.5,
      maxRetries: 5,
    },
  });

  await client.connect(transport);
  // Captured now: terminateSession() clears the transport's session id.
  const protocolVersion = transport.protocolVersion ?? null;
  const sessionId = transport.sessionId ?? null;

  const { tools } = await client.listTools();
  const { resources } = await client.listResources();
  const { resourceTemplates } = await client.listResourceTemplates();
  const { prompts } = await client.listPrompts();

  const agents = await client.readResource({ uri: 'agentgate://agents' });
  const status = await client.readResource({ uri: `agentgate://agents/${agentId}/status` });
  const prompt = await client.getPrompt({
    name: 'delegate_task',
    arguments: { agentId, goal: 'say hello' },
  });

  const dispatch = await client.callTool(
    { name: 'dispatch_task', arguments: { agentId, instruction } },
    undefined,
    { timeout: 60_000 },
  );
  const dispatchContent = dispatch.structuredContent ?? null;

  let final = null;
  if (dispatchContent?.dispatched) {
    for (let i = 0; i < POLL_MAX; i++) {
      const res = await client.callTool({
        name: 'get_execution_result',
        arguments: { taskId: dispatchContent.taskId },
      });
      final = res.structuredContent ?? null;
      if (final && TERMINAL.has(final.status)) break;
      await sleep(POLL_INTERVAL_MS);
    }
  }

  const out = {
    protocolVersion,
    sessionId,
    tools: tools.map((t) => t.name),
    resources: resources.map((r) => r.uri),
    resourceTemplates: resourceTemplates.map((t) => t.uriTemplate),
    prompts: prompts.map((p) => p.name),
    agentsResource: agents.contents?.[0]?.text ?? null,
    statusResource: status.contents?.[0]?.text ?? null,
    promptMessages: prompt.messages?.length ?? 0,
    elicitations,
    elicitationMessage,
    elicitationSchema,
    dispatch: dispatchContent,
    dispatchIsError: dispatch.isError === true,
    final,
  };
  await writeStdout(JSON.stringify(out));

  // Client.close() only aborts the transport locally; the DELETE that ends the
  // server-side session is sent by terminateSession().
  await transport.terminateSession();
  await client.close();
}

main().then(
  () => process.exit(0),
  (err) => {
    process.stderr.write(`tsclient: error: ${err?.message ?? err}\n${err?.stack ?? ''}\n`);
    process.exit(1);
  },
);
