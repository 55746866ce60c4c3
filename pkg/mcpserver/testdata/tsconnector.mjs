// tsconnector.mjs drives agentgate's MCP server with the official TypeScript
// SDK client (@modelcontextprotocol/sdk, pinned in the repo's package.json)
// as an MCP host holding an agent's connector key does. It is run by the Go
// interop test (TestTypeScriptConnector):
//
//   MCP_URL=http://127.0.0.1:PORT/mcp MCP_TOKEN=<connector key> \
//     node pkg/mcpserver/testdata/tsconnector.mjs
//
// It lists what the session offers (tools, and the resources, templates and
// prompts it must not have), lists the playbooks, runs one, asks the agent,
// and tries a tool of the user scope, approving every consent question. On
// success it prints exactly one line of JSON to stdout and exits 0; on
// error it prints the error to stderr and exits 1; the watchdog exits 2.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const WATCHDOG_MS = 90_000;
const watchdog = setTimeout(() => {
  process.stderr.write(`tsconnector: watchdog: no result after ${WATCHDOG_MS} ms\n`);
  process.exit(2);
}, WATCHDOG_MS);
void watchdog;

function env(name) {
  const v = process.env[name];
  if (v === undefined || v === '') throw new Error(`environment variable ${name} is required`);
  return v;
}

// listed runs the list call fn and returns how many key it lists, or the
// error that refused it.
async function listed(fn, key) {
  try {
    return { items: ((await fn())[key] ?? []).length };
  } catch (err) {
    return { error: String(err?.message ?? err) };
  }
}

// refused runs fn and returns what refused it (a thrown error's message, or
// an isError result's text), or null if it went through.
async function refused(fn) {
  try {
    const res = await fn();
    if (res?.isError) return res.content?.[0]?.text ?? 'isError';
    return null;
  } catch (err) {
    return String(err?.message ?? err);
  }
}

async function main() {
  const client = new Client(
    { name: 'agentgate-ts-connector', version: '1.0.0' },
    { capabilities: { elicitation: {} } },
  );
  client.onerror = (err) => process.stderr.write(`tsconnector: transport warning: ${err?.stack ?? err}\n`);
  let elicitations = 0;
  client.setRequestHandler(ElicitRequestSchema, async () => {
    elicitations++;
    return { action: 'accept', content: { approve: true } };
  });
  const transport = new StreamableHTTPClientTransport(new URL(env('MCP_URL')), {
    requestInit: { headers: { Authorization: `Bearer ${env('MCP_TOKEN')}` } },
    reconnectionOptions: { initialReconnectionDelay: 200, maxReconnectionDelay: 2000, reconnectionDelayGrowFactor: 1.5, maxRetries: 5 },
  });
  await client.connect(transport);
  const protocolVersion = transport.protocolVersion ?? null;
  const capabilities = client.getServerCapabilities() ?? {};

  const { tools } = await client.listTools();
  const lists = {
    resources: await listed(() => client.listResources(), 'resources'),
    templates: await listed(() => client.listResourceTemplates(), 'resourceTemplates'),
    prompts: await listed(() => client.listPrompts(), 'prompts'),
  };
  const agents = await refused(() => client.readResource({ uri: 'agentgate://agents' }));

  // callTool checks each structured result against the tool's output schema.
  const playbooks = await client.callTool({ name: 'list_playbooks', arguments: {} });
  const run = await client.callTool(
    { name: 'run_playbook', arguments: { name: 'reverse', input: 'stressed' } },
    undefined,
    { timeout: 60_000 },
  );
  const ask = await client.callTool(
    { name: 'ask', arguments: { message: 'word-count one two three four' } },
    undefined,
    { timeout: 60_000 },
  );
  const badInput = await client.callTool({ name: 'run_playbook', arguments: { name: 'slow', input: { seconds: 100 } } });
  const dispatchTask = await refused(() =>
    client.callTool({ name: 'dispatch_task', arguments: { agentId: 'sample-echo', instruction: 'echo' } }),
  );

  const out = {
    protocolVersion,
    capabilities: Object.keys(capabilities).sort(),
    tools: tools.map((t) => t.name).sort(),
    lists,
    refused: { agents, dispatchTask },
    playbooks: (playbooks.structuredContent?.playbooks ?? []).map((p) => p.name),
    run: run.structuredContent ?? null,
    runIsError: run.isError === true,
    ask: ask.structuredContent ?? null,
    askIsError: ask.isError === true,
    badInput: badInput.structuredContent ?? null,
    elicitations,
  };
  await new Promise((resolve, reject) => process.stdout.write(JSON.stringify(out) + '\n', (err) => (err ? reject(err) : resolve())));
  await transport.terminateSession();
  await client.close();
}

main().then(
  () => process.exit(0),
  (err) => {
    process.stderr.write(`tsconnector: error: ${err?.message ?? err}\n${err?.stack ?? ''}\n`);
    process.exit(1);
  },
);
