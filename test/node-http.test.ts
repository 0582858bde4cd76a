// node:http as a hostile or broken server answers it (src/service/node-http.ts): answers that node:http itself gives
// no 'response' for, and the RPC's answers that fetch would have handled otherwise (test/rpc-transport.test.ts holds
// the transport to viem's own over fetch). The server writes raw bytes on a socket,
// so it can say what a well-behaved HTTP server never would.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Socket } from 'node:net';
import { gzipSync } from 'node:zlib';
import { HttpClient } from '../src/service/http.js';
import { httpRequest } from '../src/service/node-http.js';
import { ServiceError } from '../src/errors.js';
import { connectChain } from '../src/chains/client.js';
import { startRawHttpServer, type RawHttpServer } from './helpers/raw-http.js';
import type { ResolvedChain } from '../src/chains/index.js';

let server: RawHttpServer;
let base: string;
let hits = 0;

const RPC_OK = Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 1, result: '0x7a69' }));
const GZIPPED = gzipSync(RPC_OK);

// Answers that are one fixed piece of raw HTTP, by mode.
const FIXED: Record<string, string> = {
  // 101 to a request that asked for no upgrade: node:http hands the socket to an 'upgrade' listener, or destroys it.
  upgrade: 'HTTP/1.1 101 Switching Protocols\r\nupgrade: websocket\r\nconnection: upgrade\r\n\r\n',
  redirect: 'HTTP/1.1 307 Temporary Redirect\r\nlocation: https://other.example/v2/key-do-not-print\r\ncontent-length: 0\r\n\r\n',
  // Empty answers, which are no JSON-RPC answer.
  'no-content': 'HTTP/1.1 204 No Content\r\n\r\n',
  'empty-200': 'HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 0\r\n\r\n',
};

// What the server does, by the request's path: /<mode>.
function answer(sock: Socket, mode: string): void {
  hits++;
  const fixed = FIXED[mode];
  if (fixed !== undefined) {
    sock.write(fixed);
    return;
  }
  switch (mode) {
    case 'gzip':
      // Compressed although the request accepted identity only (fetch asked for gzip and decoded it).
      sock.write(
        `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-encoding: gzip\r\ncontent-length: ${GZIPPED.length}\r\n\r\n`,
      );
      sock.write(GZIPPED);
      return;
    case 'status-600':
      sock.write(`HTTP/1.1 600 Odd\r\ncontent-type: application/json\r\ncontent-length: ${RPC_OK.length}\r\n\r\n`);
      sock.write(RPC_OK);
      return;
    case 'close-after':
      // Says keep-alive, then closes the connection as soon as the answer is written.
      sock.end(
        `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nconnection: keep-alive\r\ncontent-length: ${RPC_OK.length}\r\n\r\n${RPC_OK}`,
      );
      return;
    default:
      sock.write(`HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${RPC_OK.length}\r\n\r\n`);
      sock.write(RPC_OK);
  }
}

beforeAll(async () => {
  server = await startRawHttpServer((sock, head) => answer(sock, head.split(' ')[1]!.slice(1)));
  base = server.base;
});

afterAll(() => server.close());

/** Settles within the test's own timeout, or says it never did (a hang is what these tests look for). */
function settled<T>(p: Promise<T>, ms = 20_000): Promise<T | 'never settled'> {
  let timer: NodeJS.Timeout;
  return Promise.race([p, new Promise<'never settled'>((r) => (timer = setTimeout(() => r('never settled'), ms)))]).finally(() =>
    clearTimeout(timer),
  );
}

describe('an answer node:http gives no response for', () => {
  it('101 Switching Protocols (no upgrade was asked for): a clear failure, not a request that never settles', async () => {
    const e = await settled(
      httpRequest(`${base}/upgrade`, { method: 'GET', headers: {}, headersTimeoutMs: 60_000, bodyTimeoutMs: 60_000 }).catch((x) => x),
    );
    expect(e).toBeInstanceOf(Error);
    expect((e as Error).message).toMatch(/101/);
    // The service client: one line, exit 3, and not retried (the same server would answer the same).
    hits = 0;
    const s = await settled(
      new HttpClient({ baseUrl: base, retries: 2, sleep: async () => undefined })
        .request({ method: 'GET', path: '/upgrade', idempotent: true, timeoutMs: 60_000 })
        .catch((x) => x),
    );
    expect(s).toBeInstanceOf(ServiceError);
    expect(s).toMatchObject({ code: 'service_unreachable', exitCode: 3 });
    expect((s as Error).message).toMatch(/101/);
    expect(hits).toBe(1);
  });
});

describe('a kept-alive connection the server closes as it is reused', () => {
  it('never costs a request that is not retried: it goes on a connection of its own', async () => {
    const client = new HttpClient({ baseUrl: base, retries: 0 });
    let failed = 0;
    for (let i = 0; i < 20; i++) {
      await client.request({ method: 'GET', path: '/close-after', idempotent: true });
      await client.request({ method: 'POST', path: '/ok', body: {}, idempotent: false }).catch(() => failed++);
    }
    expect(failed).toBe(0);
  });
});

/** connectChain's refusal for an RPC at this URL (the local dev chain's id, as the raw server answers). */
async function connectError(url: string): Promise<{ code?: string; message: string }> {
  const resolved = {
    chain: { chainId: 31337, name: 'local' },
    rpcUrl: { value: url, source: 'flag' },
    rpcTimeoutMs: 20_000,
  } as unknown as ResolvedChain;
  return connectChain(resolved).then(
    () => ({ message: 'connected' }),
    (x) => x,
  );
}

describe('why an RPC could not be used is said, not only "HTTP request failed."', () => {
  it('a refused connection names the refusal', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as { port: number }).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const e = await connectError(`http://127.0.0.1:${port}`);
    expect(e.code).toBe('rpc_unreachable');
    expect(e.message).toMatch(/did not answer eth_chainId: HTTP request failed: connect ECONNREFUSED/);
  });

  it.each([
    ['gzip', /HTTP request failed: the RPC answered in content-encoding gzip, which loopsign did not accept/],
    ['status-600', /HTTP request failed: the RPC answered with HTTP status 600, which is not a valid status/],
    ['redirect', /HTTP request failed: the RPC answered 307, a redirect to https:\/\/other\.example; loopsign does not follow/],
    ['no-content', /HTTP request failed: the RPC answered 204 with an empty body, which is no JSON-RPC answer/],
    ['empty-200', /HTTP request failed: the RPC answered 200 with an empty body, which is no JSON-RPC answer/],
  ])('an answer viem cannot be handed as fetch would (%s) is named', async (mode, words) => {
    const e = await connectError(`${base}/${mode}`);
    expect(e.code).toBe('rpc_unreachable');
    expect(e.message).toMatch(words);
    expect(e.message).not.toContain('key-do-not-print');
  });
});
