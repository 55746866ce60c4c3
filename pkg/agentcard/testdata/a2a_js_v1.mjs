// a2a_js_v1.mjs drives an agentgate front door with the A2A v1.0 JavaScript
// SDK, @a2a-js/sdk 1.3.0 (installed under the npm alias a2a-js-v1, pinned in
// the repo's package.json), as its README tells users to:
//
//   - ClientFactory.createFromUrl(<interface URL>) resolves the card. With
//     no trailing slash, .well-known/agent-card.json resolves against the
//     URL's parent: /api/agents/NAME/.well-known/agent-card.json. The SDK
//     sends A2A-Version: 1.0 with the card request and on every call.
//   - The bearer key goes on every request through the SDK's
//     createAuthenticatingFetchWithRetry, given to the card resolver and to
//     the JSON-RPC transport (fetchImpl).
//   - SendMessage "reverse stressed" with the client's defaults (blocking:
//     returnImmediately false), then GetTask until the task is terminal.
//   - A second client, from the authenticated card (<interface URL>/agent-card),
//     configured to poll (returnImmediately true): SendMessage "slow 1.5"
//     (the sample agent answers "waited 1.5s"), which should come back
//     before the task is done, then GetTask until terminal.
//
//   node pkg/agentcard/testdata/a2a_js_v1.mjs <interface URL> <key>
//
// See jsclient_common.mjs for the arguments and the output contract.

import { args, bearerHandler, check, poll, run } from './jsclient_common.mjs';

import { Role, TaskState, taskStateToJSON } from 'a2a-js-v1';
import {
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  createAuthenticatingFetchWithRetry,
} from 'a2a-js-v1/client';
import { randomUUID } from 'node:crypto';

const TERMINAL = new Set([
  TaskState.TASK_STATE_COMPLETED,
  TaskState.TASK_STATE_FAILED,
  TaskState.TASK_STATE_CANCELED,
  TaskState.TASK_STATE_REJECTED,
]);

// textOf returns the text of a task's artifacts, or of its status message.
function textOf(task) {
  const texts = [];
  for (const a of task.artifacts ?? []) {
    for (const p of a.parts ?? []) if (p.content?.$case === 'text') texts.push(p.content.value);
  }
  if (texts.length === 0) {
    for (const p of task.status?.message?.parts ?? []) if (p.content?.$case === 'text') texts.push(p.content.value);
  }
  return texts.join('\n');
}

function cardSummary(card) {
  return {
    name: card.name,
    interfaces: (card.supportedInterfaces ?? []).map((i) => ({
      url: i.url,
      protocolBinding: i.protocolBinding,
      protocolVersion: i.protocolVersion,
    })),
    streaming: card.capabilities?.streaming ?? null,
  };
}

// converse sends text with client and polls GetTask until the task is
// terminal.
async function converse(client, text) {
  const sent = await client.sendMessage({
    message: {
      messageId: randomUUID(),
      role: Role.ROLE_USER,
      parts: [{ content: { $case: 'text', value: text } }],
    },
  });
  check(sent && 'id' in sent && 'status' in sent, `SendMessage ${JSON.stringify(text)} answered with a task`, sent);
  const { result: task, polls } = await poll(
    () => client.getTask({ id: sent.id }),
    (t) => TERMINAL.has(t.status?.state),
  );
  check(task.id === sent.id, 'GetTask answers the task asked for', task.id);
  return {
    taskId: task.id,
    sendState: taskStateToJSON(sent.status?.state),
    state: taskStateToJSON(task.status?.state),
    text: textOf(task),
    polls,
  };
}

run(async () => {
  const { url, key } = args();
  const authFetch = createAuthenticatingFetchWithRetry(fetch, bearerHandler(key));
  const options = (clientConfig) =>
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl: authFetch })],
      cardResolver: new DefaultAgentCardResolver({ fetchImpl: authFetch }),
      clientConfig,
    });

  // The public card, found from the interface URL.
  const client = await new ClientFactory(options()).createFromUrl(url);
  const card = await client.getAgentCard();
  const blocking = await converse(client, 'reverse stressed');

  // The authenticated card, by its full URL; a client that polls.
  const polled = await new ClientFactory(options({ polling: true })).createFromUrl(url + '/agent-card', '');
  const authCard = await polled.getAgentCard();
  const polling = await converse(polled, 'slow 1.5');

  return {
    sdk: '@a2a-js/sdk@1.3.0',
    protocolVersion: client.protocolVersion,
    endpoint: client.transport.endpoint ?? client.transport.base?.endpoint ?? null,
    card: cardSummary(card),
    authCard: cardSummary(authCard),
    blocking,
    polling,
  };
});
