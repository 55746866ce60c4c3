// jsclient_common.mjs: what the JS client interop scripts of this directory
// share (a2a_js_v1.mjs, a2a_js_v03.mjs, adk_remote.mjs). Each script takes
//
//   node <script> <interface URL> <bearer key>
//
// or the same in A2A_URL and A2A_KEY. The interface URL is an agent's A2A
// front door, http://HOST/api/agents/NAME/a2a, without a trailing slash
// (how a URL without one resolves relative card paths is part of what is
// tested). On success a script prints one line of JSON to stdout and exits
// 0; on any failure it prints the error, and every HTTP request it made,
// to stderr and exits 1; the watchdog exits 2.
//
// Every HTTP request the SDKs make goes through a recorder installed as the
// global fetch: it only observes (method, path, A2A-Version, whether an
// Authorization header was sent, the JSON-RPC method, how a send asked to
// be answered, the status, and the body of an error answer). Credentials
// are added the way each SDK lets its users add them, never by the
// recorder.

import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const WATCHDOG_MS = Number(process.env.WATCHDOG_MS || 90_000);

// The SDKs (and ADK's logger) may write to console.log; stdout carries the
// one result line, so everything else goes to stderr.
for (const name of ['log', 'info', 'debug']) console[name] = (...args) => console.error(...args);

const watchdog = setTimeout(() => {
  process.stderr.write(`${script()}: watchdog: no result after ${WATCHDOG_MS} ms\n`);
  dumpRequests();
  process.exit(2);
}, WATCHDOG_MS);
void watchdog; // ref'd on purpose: every path ends in process.exit

function script() {
  return (process.argv[1] || 'jsclient').split('/').pop();
}

// args returns the interface URL and the bearer key.
export function args() {
  const url = process.argv[2] || process.env.A2A_URL || '';
  const key = process.argv[3] || process.env.A2A_KEY || '';
  if (!url || !key) {
    throw new Error('usage: node ' + script() + ' <interface URL> <bearer key> (or A2A_URL and A2A_KEY)');
  }
  let u;
  try {
    u = new URL(url);
  } catch {
    throw new Error(`interface URL ${JSON.stringify(url)} is not a URL`);
  }
  if (u.pathname.endsWith('/')) {
    throw new Error(`interface URL ${url} must not end with a slash: give the front door, .../api/agents/NAME/a2a`);
  }
  return { url, key };
}

// requests is what the recorder saw, in order.
export const requests = [];

const realFetch = globalThis.fetch;

globalThis.fetch = async function recordingFetch(input, init) {
  const url = new URL(input instanceof Request ? input.url : String(input));
  const headers = new Headers(input instanceof Request ? input.headers : undefined);
  new Headers(init?.headers).forEach((v, k) => headers.set(k, v));
  const rec = {
    method: (init?.method || (input instanceof Request ? input.method : 'GET')).toUpperCase(),
    path: url.pathname,
    a2aVersion: headers.get('a2a-version'),
    authorization: headers.has('authorization'),
  };
  if (typeof init?.body === 'string') {
    try {
      const body = JSON.parse(init.body);
      if (body && typeof body.method === 'string') rec.rpc = body.method;
      // How a send asked to be answered: v1.0 returnImmediately, v0.3 blocking.
      const conf = body?.params?.configuration;
      if (conf && 'returnImmediately' in conf) rec.returnImmediately = conf.returnImmediately;
      if (conf && 'blocking' in conf) rec.blocking = conf.blocking;
    } catch {
      // not JSON: nothing to record
    }
  }
  requests.push(rec);
  let res;
  try {
    res = await realFetch(input, init);
  } catch (err) {
    rec.error = String(err?.cause?.message || err?.message || err);
    throw err;
  }
  rec.status = res.status;
  const type = res.headers.get('content-type') || '';
  if (type.includes('json')) {
    try {
      const text = await res.clone().text();
      if (!res.ok || /"error"\s*:/.test(text)) rec.answer = text.slice(0, 600);
    } catch {
      // the body stays the SDK's to read
    }
  } else if (!res.ok) {
    rec.contentType = type;
  }
  return res;
};

// bearerHandler is an AuthenticationHandler (both SDK generations define
// the same interface) that sends the key on every request and never
// retries: a 401 is a failure to report, not one to paper over.
export function bearerHandler(key) {
  return {
    headers: async () => ({ Authorization: `Bearer ${key}` }),
    shouldRetryWithHeaders: async () => undefined,
  };
}

// packageVersion returns the version of the package that spec resolves to
// from parent (a file: URL; default this directory), read from its
// package.json (which packages with an "exports" map do not export).
export function packageVersion(spec, parent = import.meta.url) {
  const file = fileURLToPath(import.meta.resolve(spec, parent));
  const nm = '/node_modules/';
  const i = file.lastIndexOf(nm);
  if (i < 0) throw new Error(`${spec} resolves to ${file}, outside node_modules`);
  const segs = file.slice(i + nm.length).split('/');
  const name = segs[0].startsWith('@') ? segs.slice(0, 2).join('/') : segs[0];
  return JSON.parse(readFileSync(file.slice(0, i + nm.length) + name + '/package.json', 'utf8')).version;
}

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// poll calls get until done(result) or the time is up, and returns the last
// result and how many calls it took.
export async function poll(get, done, { intervalMs = 200, timeoutMs = 30_000 } = {}) {
  const deadline = Date.now() + timeoutMs;
  for (let n = 1; ; n++) {
    const r = await get();
    if (done(r)) return { result: r, polls: n };
    if (Date.now() > deadline) {
      throw new Error(`not done after ${n} polls in ${timeoutMs} ms; last answer: ${JSON.stringify(r)}`);
    }
    await sleep(intervalMs);
  }
}

// check throws unless cond holds.
export function check(cond, what, got) {
  if (!cond) throw new Error(`${what}${got === undefined ? '' : `; got ${JSON.stringify(got)}`}`);
}

function dumpRequests() {
  process.stderr.write(`${script()}: requests made:\n`);
  for (const r of requests) process.stderr.write('  ' + JSON.stringify(r) + '\n');
}

function writeStdout(line) {
  return new Promise((resolve, reject) => {
    process.stdout.write(line + '\n', (err) => (err ? reject(err) : resolve()));
  });
}

// run runs main, prints its result (with the requests made) and exits.
export function run(main) {
  main().then(
    async (result) => {
      await writeStdout(JSON.stringify({ ...result, requests }));
      process.exit(0);
    },
    (err) => {
      process.stderr.write(`${script()}: error: ${err?.message ?? err}\n${err?.stack ?? ''}\n`);
      if (err?.cause) process.stderr.write(`cause: ${err.cause?.stack ?? err.cause}\n`);
      dumpRequests();
      process.exit(1);
    },
  );
}
