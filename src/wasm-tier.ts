// HTTP/1 responses are parsed by llhttp compiled to WebAssembly (undici, and node's own fetch, which viem uses). V8
// compiles it at once with its baseline compiler (Liftoff), then again, optimized, on background threads: that second
// compile cost some 50 ms of CPU in every command that talks to the service or the chain, which parses a few kilobytes
// of headers (the baseline code is ample for that). So, just before the first HTTP client is made, V8 is told to keep
// the baseline code. Not at start-up: changing a V8 flag changes the flags' hash, and node's built-in modules loaded
// after it can no longer use their embedded code cache (verify-evidence, which makes no HTTP request, was 10 ms
// slower with the flag set in bin/loopsign.js). Only WebAssembly compiled after the call is affected.
import { setFlagsFromString } from 'node:v8';

let set = false;

/** Call before making an HTTP client (undici, fetch, a viem http transport): the first call sets the flag. */
export function beforeHttp(): void {
  if (set) return;
  setFlagsFromString('--liftoff-only');
  set = true;
}
