// a2a_js_v03.mjs drives an agentgate front door with the A2A v0.3
// JavaScript SDK, @a2a-js/sdk 0.3.x (pinned in the repo's package.json; the
// one @google/adk uses too), the two ways its users do:
//
//   - ClientFactory.createFromUrl(<interface URL>), as its README shows:
//     the card from /api/agents/NAME/.well-known/agent-card.json (a URL
//     without a trailing slash resolves .well-known/agent-card.json against
//     its parent), fetched with no A2A-Version header, so agentgate serves
//     the v0.3-readable form; the client calls the card's `url` with its
//     `preferredTransport`. The bearer key goes on every request through
//     the SDK's createAuthenticatingFetchWithRetry, given to the card
//     resolver and to the JSON-RPC transport. message/send "reverse
//     stressed" with the client's defaults (configuration.blocking: true),
//     then tasks/get until the task is terminal.
//   - A2AClient.fromCardUrl(<interface URL>/.well-known/agent-card.json, {
//     fetchImpl }), the card URL A2AClient itself derives from an agent's
//     base URL: message/send "slow 1.5" with configuration.blocking: false,
//     which should come back before the task is done, then tasks/get until
//     terminal.
//
//   node pkg/agentcard/testdata/a2a_js_v03.mjs <interface URL> <key>
//
// See jsclient_common.mjs for the arguments and the output contract.

import { args, bearerHandler, check, packageVersion, poll, run } from './jsclient_common.mjs';

import {
  A2AClient,
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  createAuthenticatingFetchWithRetry,
} from '@a2a-js/sdk/client';
import { randomUUID } from 'node:crypto';

const sdkVersion = packageVersion('@a2a-js/sdk/client');

const TERMINAL = new Set(['completed', 'failed', 'canceled', 'rejected']);

// textOf returns the text of a task's artifacts, or of its status message.
function textOf(task) {
  const texts = [];
  for (const a of task.artifacts ?? []) {
    for (const p of a.parts ?? []) if (p.kind === 'text') texts.push(p.text);
  }
  if (texts.length === 0) {
    for (const p of task.status?.message?.parts ?? []) if (p.kind === 'text') texts.push(p.text);
  }
  return texts.join('\n');
}

function cardSummary(card) {
  return {
    name: card.name,
    url: card.url ?? null,
    preferredTransport: card.preferredTransport ?? null,
    protocolVersion: card.protocolVersion ?? null,
    additionalInterfaces: card.additionalInterfaces ?? null,
    securitySchemes: card.securitySchemes ?? null,
    security: card.security ?? null,
    streaming: card.capabilities?.streaming ?? null,
  };
}

function message(text) {
  return { kind: 'message', messageId: randomUUID(), role: 'user', parts: [{ kind: 'text', text }] };
}

function checkTask(what, t) {
  check(t && t.kind === 'task' && typeof t.id === 'string' && t.status?.state, `${what} answered with a v0.3 task (kind "task")`, t);
  return t;
}

// unwrap returns an A2AClient answer's result, or throws its error.
function unwrap(what, res) {
  if (res && 'error' in res) throw new Error(`${what}: JSON-RPC error ${JSON.stringify(res.error)}`);
  return res.result;
}

run(async () => {
  const { url, key } = args();
  const authFetch = createAuthenticatingFetchWithRetry(fetch, bearerHandler(key));

  // ClientFactory, from the interface URL.
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl: authFetch })],
      cardResolver: new DefaultAgentCardResolver({ fetchImpl: authFetch }),
    }),
  );
  const client = await factory.createFromUrl(url);
  const card = await client.getAgentCard();
  const sent = checkTask('message/send', await client.sendMessage({ message: message('reverse stressed') }));
  const { result: done, polls } = await poll(
    async () => checkTask('tasks/get', await client.getTask({ id: sent.id })),
    (t) => TERMINAL.has(t.status.state),
  );
  check(done.id === sent.id, 'tasks/get answers the task asked for', done.id);
  const factoryRun = { taskId: done.id, sendState: sent.status.state, state: done.status.state, text: textOf(done), polls };

  // A2AClient, from the card URL it would derive itself.
  const legacy = await A2AClient.fromCardUrl(url + '/.well-known/agent-card.json', { fetchImpl: authFetch });
  const legacyCard = await legacy.getAgentCard();
  const sent2 = checkTask(
    'A2AClient message/send',
    unwrap('message/send', await legacy.sendMessage({ message: message('slow 1.5'), configuration: { blocking: false } })),
  );
  const { result: done2, polls: polls2 } = await poll(
    async () => checkTask('A2AClient tasks/get', unwrap('tasks/get', await legacy.getTask({ id: sent2.id }))),
    (t) => TERMINAL.has(t.status.state),
  );
  const a2aClientRun = { taskId: done2.id, sendState: sent2.status.state, state: done2.status.state, text: textOf(done2), polls: polls2 };

  return {
    sdk: `@a2a-js/sdk@${sdkVersion}`,
    endpoint: client.transport.endpoint ?? null,
    card: cardSummary(card),
    a2aClientCard: cardSummary(legacyCard),
    factory: factoryRun,
    a2aClient: a2aClientRun,
  };
});
