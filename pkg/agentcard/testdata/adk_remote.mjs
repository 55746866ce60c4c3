// adk_remote.mjs drives an agentgate front door with Google's Agent
// Development Kit for TypeScript, @google/adk 2.0.0 (pinned in the repo's
// package.json; it speaks A2A through @a2a-js/sdk 0.3.x, deduplicated to
// the pinned one): a RemoteA2AAgent pointed at the agent, run by an
// InMemoryRunner (no model: a remote agent needs none) on a user message
// "reverse stressed"; the final event's text must be "desserts".
//
// How ADK 2.0.0 is told where the agent is and how to authenticate:
//
//   - agentCard: <interface URL>, a string. ADK resolves it with
//     @a2a-js/sdk's DefaultAgentCardResolver: resolve(source) with the
//     default path, new URL('.well-known/agent-card.json', source), so the
//     card comes from /api/agents/NAME/.well-known/agent-card.json, fetched
//     with the global fetch: no credentials (ADK has no option for the card
//     request), no A2A-Version header. (A full card URL,
//     .../a2a/.well-known/agent-card.json, would resolve to
//     .../a2a/.well-known/.well-known/agent-card.json in ADK 2.0.0.)
//   - clientFactory: @a2a-js/sdk's ClientFactory whose JSON-RPC transport
//     fetches with the bearer key (createAuthenticatingFetchWithRetry). ADK
//     builds its client with factory.createFromAgentCard(card).
//   - The card says streaming: false, so ADK calls sendMessage (a blocking
//     message/send) rather than message/stream, and turns the task it gets
//     back into one event. ADK does not poll: the answer to the send must
//     be the finished task.
//
//   node pkg/agentcard/testdata/adk_remote.mjs <interface URL> <key>
//
// See jsclient_common.mjs for the arguments and the output contract.

import { args, bearerHandler, check, packageVersion, run } from './jsclient_common.mjs';

import { InMemoryRunner, RemoteA2AAgent } from '@google/adk';
import {
  ClientFactory,
  ClientFactoryOptions,
  JsonRpcTransportFactory,
  createAuthenticatingFetchWithRetry,
} from '@a2a-js/sdk/client';

const adkVersion = packageVersion('@google/adk');
// The @a2a-js/sdk ADK itself imports, resolved from ADK's own files.
const adkA2AVersion = packageVersion('@a2a-js/sdk/client', import.meta.resolve('@google/adk'));
const a2aVersion = packageVersion('@a2a-js/sdk/client');

function textOf(event) {
  return (event?.content?.parts ?? [])
    .filter((p) => typeof p.text === 'string' && !p.thought)
    .map((p) => p.text)
    .join('');
}

run(async () => {
  const { url, key } = args();
  check(adkA2AVersion === a2aVersion, `ADK uses @a2a-js/sdk ${adkA2AVersion}, not the pinned ${a2aVersion}: the lockfile does not dedupe it`);
  const authFetch = createAuthenticatingFetchWithRetry(fetch, bearerHandler(key));
  const clientFactory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl: authFetch })],
    }),
  );
  const agent = new RemoteA2AAgent({
    name: 'sample_echo',
    description: 'the sample agent behind agentgate',
    agentCard: url,
    clientFactory,
  });
  const runner = new InMemoryRunner({ agent, appName: 'agentgate_interop' });
  const session = await runner.sessionService.createSession({ appName: 'agentgate_interop', userId: 'alice' });

  const events = [];
  for await (const ev of runner.runAsync({
    userId: 'alice',
    sessionId: session.id,
    newMessage: { role: 'user', parts: [{ text: 'reverse stressed' }] },
  })) {
    events.push(ev);
  }
  const summary = events.map((ev) => ({
    author: ev.author,
    text: textOf(ev),
    errorCode: ev.errorCode ?? null,
    errorMessage: ev.errorMessage ?? null,
    turnComplete: ev.turnComplete ?? null,
    partial: ev.partial ?? null,
    taskId: ev.customMetadata?.['a2a:task_id'] ?? null,
  }));
  const failed = summary.filter((e) => e.errorMessage || e.errorCode);
  check(failed.length === 0, `ADK reported an error: ${JSON.stringify(failed)}`);
  check(events.length > 0, 'ADK produced no event');
  const last = summary[summary.length - 1];
  return {
    sdk: `@google/adk@${adkVersion}`,
    a2aSdk: `@a2a-js/sdk@${adkA2AVersion}`,
    agentCard: url,
    events: summary,
    final: { author: last.author, text: last.text, taskId: last.taskId },
  };
});
