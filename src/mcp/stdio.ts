// On an MCP stdio server, stdout is the protocol's alone. The transport gets a stream to the real stdout; anything
// else written to process.stdout afterwards (a library's console.log, a stray debug line) is sent to stderr, which
// hosts keep as the server's log, so it can never corrupt the JSON-RPC stream.
import { Writable } from 'node:stream';

export function reserveStdout(): Writable {
  const stdout = process.stdout;
  const write = stdout.write.bind(stdout) as (chunk: Uint8Array, done: (error?: Error | null) => void) => boolean;
  const protocol = new Writable({ write: (chunk: Uint8Array, _encoding, done) => void write(chunk, done) });
  stdout.write = process.stderr.write.bind(process.stderr) as typeof stdout.write;
  return protocol;
}
