// loopsign's viem transport for the RPC (src/chains/rpc-transport.ts) against its anchor, viem's own `http` transport
// over fetch: one raw server answers both, mode by mode (answers, JSON-RPC errors, HTTP errors, stalls, cut-offs,
// oversize answers), and what a caller gets must be the same: the same value, or an error of the same class with the
// same message (viem's, naming the URL and the request), status, code, data and Retry-After, after the same number
// of requests (viem's retry rules read those fields). Where node:http and fetch fail in their own words (a reset
// connection), the class and the absent status must match, and loopsign's words must name the reason.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Socket } from 'node:net';
import { http, type EIP1193RequestFn } from 'viem';
import { rpcTransport } from '../src/chains/rpc-transport.js';
import { startRawHttpServer, type RawHttpServer } from './helpers/raw-http.js';

let server: RawHttpServer;
let base: string;
/** What the server saw, by mode: each request's target, authorization, content type and body. */
const seen = new Map<string, { target: string; authorization?: string; contentType?: string; body: any }[]>();

const json = (status: string, body: string, type = 'application/json', extra = '') =>
  `HTTP/1.1 ${status}\r\ncontent-type: ${type}\r\n${extra}content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;

// What the server answers, by mode (the request's first path segment); `id` is the request's JSON-RPC id.
const MODES: Record<string, (id: unknown) => string | 'stall' | 'reset' | 'stall-body' | 'endless'> = {
  ok: (id) => json('200 OK', JSON.stringify({ jsonrpc: '2.0', id, result: '0x7a69' })),
  creds: (id) => json('200 OK', JSON.stringify({ jsonrpc: '2.0', id, result: '0x7a69' })),
  'null-result': (id) => json('200 OK', JSON.stringify({ jsonrpc: '2.0', id, result: null })),
  'text-json': (id) => json('200 OK', JSON.stringify({ jsonrpc: '2.0', id, result: '0x1' }), 'text/plain'),
  'json-charset': (id) => json('200 OK', JSON.stringify({ jsonrpc: '2.0', id, result: '0x2' }), 'application/json; charset=utf-8'),
  array: (id) => json('200 OK', JSON.stringify([{ jsonrpc: '2.0', id, result: '0x1' }])),
  revert: (id) =>
    json(
      '200 OK',
      JSON.stringify({
        jsonrpc: '2.0',
        id,
        error: {
          code: 3,
          message: 'execution reverted: no',
          data: '0x08c379a00000000000000000000000000000000000000000000000000000000000000020',
        },
      }),
    ),
  'invalid-input': (id) => json('200 OK', JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32000, message: 'nonce too low' } })),
  'odd-error': (id) => json('200 OK', JSON.stringify({ jsonrpc: '2.0', id, error: 'something broke' })),
  'error-and-result': (id) =>
    json('200 OK', JSON.stringify({ jsonrpc: '2.0', id, result: '0x1', error: { code: -32603, message: 'both' } })),
  'internal-500': (id) =>
    json('500 Internal Server Error', JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32603, message: 'internal' } })),
  'method-403': (id) => json('403 Forbidden', JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32601, message: 'no such method' } })),
  'html-502': () => json('502 Bad Gateway', '<html><body>bad gateway</body></html>', 'text/html'),
  'text-500': () => json('500 Internal Server Error', 'oops', 'text/plain'),
  'json-503': () => json('503 Service Unavailable', '{"message":"down"}'),
  'retry-after': () => json('429 Too Many Requests', '', 'text/plain', 'retry-after: 0\r\n'),
  // fetch's Headers join a repeated header ("0, 1"), where node:http keeps only the first Retry-After.
  'retry-after-twice': () => json('429 Too Many Requests', '', 'text/plain', 'retry-after: 0\r\nretry-after: 1\r\n'),
  // A UTF-8 byte order mark: fetch's decoder drops it, JSON.parse does not.
  bom: (id) => json('200 OK', `\ufeff${JSON.stringify({ jsonrpc: '2.0', id, result: '0x3' })}`),
  'bom-text': (id) => json('200 OK', `\ufeff${JSON.stringify({ jsonrpc: '2.0', id, result: '0x4' })}`, 'text/plain'),
  // A reason phrase in UTF-8 (the error's details when the body says nothing): fetch reads it as UTF-8, node:http as
  // Latin-1.
  'utf8-reason': () => json('418 Théière — essayez ailleurs', '', 'text/plain'),
  'empty-404': () => 'HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n',
  'bad-json': () => json('200 OK', '{"jsonrpc":"2.0","result":'),
  'text-garbage': () => json('200 OK', 'garbage', 'text/plain'),
  'bad-json-500': () => json('500 Internal Server Error', '{not json'),
  'huge-length': () => 'HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 20000000\r\n\r\n{"jsonrpc"',
  endless: () => 'endless',
  'stall-headers': () => 'stall',
  'stall-body': () => 'stall-body',
  reset: () => 'reset',
};

function answer(sock: Socket, head: string, body: string): void {
  const target = head.split(' ')[1]!;
  const mode = target.split('/')[1]!;
  const header = (name: string) => new RegExp(`^${name}:\\s*(.*)$`, 'im').exec(head)?.[1]?.trim();
  let parsed: any;
  try {
    parsed = JSON.parse(body);
  } catch {
    parsed = body;
  }
  const list = seen.get(mode) ?? [];
  list.push({ target, authorization: header('authorization'), contentType: header('content-type'), body: parsed });
  seen.set(mode, list);
  // A 429 asking the wait the path names (not in MODES: viem over fetch would wait it out).
  if (mode === 'retry-long') {
    const wait = decodeURIComponent(target.split('/')[2]!);
    return void sock.write(json('429 Too Many Requests', '', 'text/plain', `retry-after: ${wait}\r\n`));
  }
  const out = MODES[mode]!(parsed?.id);
  if (out === 'stall') return;
  if (out === 'reset') return void sock.destroy();
  if (out === 'stall-body')
    return void sock.write('HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{"jsonrpc":');
  if (out === 'endless') {
    sock.write('HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n');
    const chunk = `10000\r\n${' '.repeat(0x10000)}\r\n`;
    const pump = () => {
      while (!sock.destroyed && sock.write(chunk));
      if (!sock.destroyed) sock.once('drain', pump);
    };
    return pump();
  }
  sock.write(out);
}

beforeAll(async () => {
  server = await startRawHttpServer((sock, head, body) => answer(sock, head, body));
  base = server.base;
});

afterAll(() => server.close());

// A short timeout only where the server never answers (the stalls, where the timeout is the outcome, and it must be
// quick); elsewhere one no loaded machine reaches, so that how fast an answer (10 MiB of an endless one) comes in
// never decides the outcome of one side and not the other.
const optionsFor = (url: string) => ({ timeout: /\/stall-/.test(url) ? 200 : 60_000, retryCount: 1 });
const anchor = (url: string) => http(url, optionsFor(url))({}).request as EIP1193RequestFn;
const ours = (url: string) => rpcTransport(url, optionsFor(url))({}).request as EIP1193RequestFn;

/** What a caller can read of an outcome: the value, or the error's class, words and fields (and its cause's class). */
function outcome(result: { value?: unknown; error?: any }, withCause = true) {
  if (!('error' in result)) return { value: result.value };
  const e = result.error;
  return {
    name: e?.name,
    // How much of an endless answer was in when the cap was passed depends on where its chunks fell.
    message: typeof e?.message === 'string' ? e.message.replace(/Received: \d+ bytes/, 'Received: (over the cap) bytes') : e?.message,
    shortMessage: e?.shortMessage,
    details: e?.details,
    status: e?.status ?? e?.cause?.status,
    url: e?.url ?? e?.cause?.url,
    code: e?.code,
    data: e?.data,
    retryAfter: (e?.headers ?? e?.cause?.headers)?.get?.('retry-after'),
    ...(withCause ? { cause: e?.cause?.name } : {}),
  };
}

async function run(make: (url: string) => EIP1193RequestFn, mode: string, url = `${base}/${mode}`) {
  seen.delete(mode);
  const request = make(url);
  const result = await request({ method: 'eth_chainId' } as never).then(
    (value) => ({ value }),
    (error) => ({ error }),
  );
  return { result, requests: seen.get(mode) ?? [] };
}

/** A request as the server saw it, without the JSON-RPC id (each client counts its own). */
const asSeen = (r: { target: string; authorization?: string; contentType?: string; body: any }) => ({
  ...r,
  body: { ...r.body, id: typeof r.body?.id },
});

/** The kinds of outcome the table produced (a value, or an error's class): the table is worth only as much as it covers. */
const kinds = new Set<string>();

describe('answers and failures, as viem over fetch gives them', () => {
  const same = Object.keys(MODES).filter((m) => m !== 'reset' && m !== 'creds');
  it.each(same)('%s', async (mode) => {
    const theirs = await run(anchor, mode);
    const mine = await run(ours, mode);
    expect(outcome(mine.result)).toEqual(outcome(theirs.result));
    expect(mine.requests.map(asSeen)).toEqual(theirs.requests.map(asSeen));
    expect(theirs.requests.length).toBeGreaterThan(0);
    kinds.add('error' in mine.result ? (mine.result as { error: Error }).error.name : 'value');
  });

  it('the table has answers and errors of every kind the transport raises', () => {
    for (const name of [
      'value',
      'HttpRequestError',
      'RpcRequestError',
      'TimeoutError',
      'ResponseBodyTooLargeError',
      'InternalRpcError',
      'InvalidInputRpcError',
    ]) {
      expect(kinds).toContain(name);
    }
  });

  it('a reset connection: the same class, no status, the same retries, and the reason named', async () => {
    const theirs = await run(anchor, 'reset');
    const mine = await run(ours, 'reset');
    const t = outcome(theirs.result, false);
    const m = outcome(mine.result, false);
    expect({ name: m.name, status: m.status, short: m.shortMessage }).toEqual({ name: t.name, status: t.status, short: t.shortMessage });
    expect(mine.requests.length).toBe(theirs.requests.length);
    // fetch's cause says "fetch failed"; node:http's says what happened.
    expect((mine.result as { error: any }).error.cause?.message).toMatch(/socket hang up|ECONNRESET|closed/);
  });

  it('credentials in the URL go as Basic authorization, not in the request line, and never into an error', async () => {
    const url = `${base.replace('http://', 'http://user:p%40ss@')}/creds`;
    const theirs = await run(anchor, 'creds', url);
    const mine = await run(ours, 'creds', url);
    expect(outcome(mine.result)).toEqual(outcome(theirs.result));
    expect(mine.requests.map(asSeen)).toEqual(theirs.requests.map(asSeen));
    expect(mine.requests[0]?.authorization).toBe(`Basic ${Buffer.from('user:p@ss').toString('base64')}`);
    const failed = await run(ours, 'html-502', `${base.replace('http://', 'http://user:p%40ss@')}/html-502`);
    expect(JSON.stringify(outcome(failed.result))).not.toContain('p%40ss');
  });

  it('a Retry-After longer than a request may take is not handed to viem, which would wait it out (days) before its retry', async () => {
    // One request each, without retries: what viem's retry would read. Far longer than the timeout: dropped, in
    // seconds or as a date; within it: kept, as fetch's Headers carry it.
    const retryAfter = async (value: string) => {
      const url = `${base}/retry-long/${encodeURIComponent(value)}`;
      const error = await rpcTransport(url, { timeout: 5_000, retryCount: 0 })({})
        .request({ method: 'eth_chainId' } as never)
        .catch((e: unknown) => e);
      return { name: error.name, status: error.status, retryAfter: error.headers?.get('retry-after') ?? null };
    };
    expect(await retryAfter('86400')).toEqual({ name: 'HttpRequestError', status: 429, retryAfter: null });
    expect(await retryAfter('Fri, 31 Dec 2100 23:59:59 GMT')).toEqual({ name: 'HttpRequestError', status: 429, retryAfter: null });
    expect(await retryAfter('2')).toEqual({ name: 'HttpRequestError', status: 429, retryAfter: '2' });
    // And a node that keeps asking fails the request after viem's own backoff: two retries, not days.
    seen.delete('retry-long');
    const error = await rpcTransport(`${base}/retry-long/86400`, { timeout: 5_000, retryCount: 2 })({})
      .request({ method: 'eth_chainId' } as never)
      .catch((e: unknown) => e);
    expect({ name: error.name, status: error.status, requests: seen.get('retry-long')?.length }).toEqual({
      name: 'HttpRequestError',
      status: 429,
      requests: 3,
    });
  });

  it("a caller's abort ends the request with the caller's reason, not a timeout, and is not retried", async () => {
    const make = (f: (url: string) => EIP1193RequestFn) => async () => {
      seen.delete('stall-headers');
      const controller = new AbortController();
      const request = f(`${base}/stall-headers`);
      setTimeout(() => controller.abort(new Error('the caller gave up')), 50);
      const error = await request({ method: 'eth_chainId' } as never, { signal: controller.signal }).catch((x) => x);
      return { message: error?.message, requests: seen.get('stall-headers')?.length };
    };
    expect(await make(ours)()).toEqual(await make(anchor)());
  });
});
