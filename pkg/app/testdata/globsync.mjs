// Loaded with `node --import` before the MCP conformance suite
// (@modelcontextprotocol/conformance), which imports fs.globSync, added in
// Node 22; the test peers run on Node 20. The suite's server scenarios never
// call it (only its tier-check command does), so on an older Node the import
// resolves to fs plus a globSync that says why it cannot work. On Node 22 and
// later this does nothing.
import fs from 'node:fs';
import { register } from 'node:module';

if (typeof fs.globSync !== 'function') {
  register(import.meta.url); // this module's resolve hook below
}

const withGlobSync = 'data:text/javascript,' + encodeURIComponent(`
import fs from 'node:fs';
export * from 'node:fs';
export default fs;
export function globSync() { throw new Error('fs.globSync needs Node 22 or later'); }
`);

// resolve hands modules on disk that import fs the module above.
export async function resolve(specifier, context, next) {
  if ((specifier === 'fs' || specifier === 'node:fs') && context.parentURL?.startsWith('file:')) {
    return { url: withGlobSync, shortCircuit: true };
  }
  return next(specifier, context);
}
