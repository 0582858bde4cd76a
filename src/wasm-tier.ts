// fetch (node's undici) parses HTTP/1 responses with llhttp compiled to WebAssembly. V8 compiles it at once with its
// baseline compiler (Liftoff), then again, optimized, on background threads: that second compile cost some 50 ms of
// CPU in every command that used fetch, which parses a few kilobytes of headers (the baseline code is ample for that).
// The service client and the chain's RPC use node:http (src/service/node-http.ts), whose parser is native; fetch is
// left to the MCP SDK's transport, the JSON-RPC signer and the sandbox. So, just before the first HTTP client is made, V8 is told to keep
// the baseline code. Not at start-up: changing a V8 flag changes the flags' hash, and node's built-in modules loaded
// after it can no longer use their embedded code cache (verify-evidence, which makes no HTTP request, was 10 ms
// slower with the flag set in bin/loopsign.js). Only WebAssembly compiled after the call is affected.
import { setFlagsFromString } from 'node:v8';

let set = false;

/** Call before making an HTTP client that uses fetch or undici: the first call sets the flag. */
export function beforeHttp(): void {
  if (set) return;
  setFlagsFromString('--liftoff-only');
  set = true;
}
