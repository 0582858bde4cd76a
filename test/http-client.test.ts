// The service client's retry rules, against a local server that misbehaves on purpose.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import { HttpClient } from '../src/service/http.js';
import { McpClient } from '../src/service/mcp.js';
import { rpcTransport } from '../src/chains/rpc-transport.js';
import { createPublicClient } from 'viem';
import { ServiceError } from '../src/errors.js';

let server: Server;
let base: string;
const plan: string[] = []; // what the server does for the next requests, in order
let hits = 0;
let endlessClosed: Promise<number> | undefined; // bytes written before the client hung up

beforeAll(async () => {
  server = createServer((req, res) => {
    hits++;
    const action = plan.shift() ?? 'ok';
    if (action === 'reset') return req.socket.destroy();
    if (action === 'stall') return; // never answers
    if (action === 'body-stall') {
      // Headers and the start of a body, then nothing more.
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.write('{"ok":');
    }
    if (action === 'body-reset') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"ok":');
      return setTimeout(() => req.socket.destroy(), 20);
    }
    if (action === 'redirect') {
      res.writeHead(307, { location: `${base}/elsewhere` });
      return res.end();
    }
    if (action === 'rpc-chain-id') {
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ jsonrpc: '2.0', id: 1, result: '0x7a69' }));
    }
    if (action === 'gzip-offer') {
      // What the client offered to accept: an answer is only ever the bytes sent.
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ acceptEncoding: req.headers['accept-encoding'] ?? null }));
    }
    if (action === 'endless') {
      // An endless 200 with no content-length: 64 KiB chunks until the client hangs up.
      res.writeHead(200, { 'content-type': req.url?.includes('/mcp/') ? 'text/event-stream' : 'application/json' });
      const chunk = Buffer.alloc(64 * 1024, 0x20);
      let written = 0;
      endlessClosed = new Promise((resolve) => res.on('close', () => resolve(written)));
      const pump = () => {
        while (!res.destroyed && written < 1024 * 1024 * 1024) {
          written += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
      };
      return pump();
    }
    if (action === 'huge-length') {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(5 * 1024 * 1024 * 1024) });
      return res.write('{"a":');
    }
    const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(JSON.stringify(body));
    };
    if (action === '429')
      return send(
        429,
        { code: 'rate_limit_exceeded', message: 'Too many requests', recoverWith: 'retry_after_delay', retryable: true, status: 429 },
        { 'retry-after': '1' },
      );
    if (action === '503') return send(503, { code: 'service_unavailable', message: 'down', retryable: true, status: 503 });
    if (action === '400')
      return send(400, { code: 'invalid_arguments', message: 'bad', recoverWith: 'fix_request_and_retry', retryable: false, status: 400 });
    if (action === '204' || action === 'empty200') {
      res.writeHead(action === '204' ? 204 : 200, action === '204' ? {} : { 'content-type': 'application/json' });
      return res.end();
    }
    if (action === 'text500') {
      res.writeHead(500);
      return res.end('oops');
    }
    return send(200, { ok: 1 });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(() => {
  server.closeAllConnections();
  server.close();
});

function client(waits: number[]) {
  return new HttpClient({ baseUrl: base, retries: 3, sleep: async (ms) => void waits.push(ms) });
}

describe('HttpClient', () => {
  it('retries 429 after Retry-After, 5xx, resets and timeouts when the call is idempotent', async () => {
    const waits: number[] = [];
    plan.push('429', '503', 'reset');
    hits = 0;
    expect(await client(waits).request({ method: 'GET', path: '/x', idempotent: true })).toEqual({ ok: 1 });
    expect(hits).toBe(4);
    expect(waits[0]).toBe(1000);
    plan.push('stall');
    expect(await client([]).request({ method: 'GET', path: '/x', idempotent: true, timeoutMs: 300 })).toEqual({ ok: 1 });
  });

  it('never retries a 4xx, and never retries a call that is not idempotent', async () => {
    plan.push('400');
    hits = 0;
    const e = await client([])
      .request({ method: 'POST', path: '/x', body: {}, idempotent: true })
      .catch((x) => x);
    expect(e).toBeInstanceOf(ServiceError);
    expect(e.code).toBe('invalid_arguments');
    expect(e.details).toMatchObject({ status: 400, retryable: false, recoverWith: 'fix_request_and_retry' });
    expect(hits).toBe(1);
    plan.push('503');
    hits = 0;
    const f = await client([])
      .request({ method: 'POST', path: '/y', body: {}, idempotent: false })
      .catch((x) => x);
    expect(f.code).toBe('service_unavailable');
    expect(hits).toBe(1);
  });

  it('a success with no body is no answer (invalid_response), never an empty object', async () => {
    for (const action of ['204', 'empty200']) {
      plan.push(action);
      hits = 0;
      const e = await client([])
        .request({ method: 'GET', path: '/nothing', idempotent: true })
        .catch((x) => x);
      expect(e).toBeInstanceOf(ServiceError);
      expect(e.code).toBe('invalid_response');
      expect(e.message).toBe(`the service answered /nothing with an empty body (HTTP ${action === '204' ? 204 : 200})`);
      expect(hits).toBe(1);
    }
  });

  it('gives up after the retries with the last error, and parses non-envelope errors', async () => {
    plan.push('503', '503', '503', '503');
    const e = await client([])
      .request({ method: 'GET', path: '/z', idempotent: true })
      .catch((x) => x);
    expect(e.code).toBe('service_unavailable');
    plan.push('text500');
    const g = await new HttpClient({ baseUrl: base, retries: 0 }).request({ method: 'GET', path: '/t', idempotent: true }).catch((x) => x);
    expect(g.code).toBe('http_500');
    expect(g.message).toMatch(/oops/);
  });

  it('stops reading an endless 200 at the byte cap (exit 3, response_too_large) and hangs up', async () => {
    plan.push('endless');
    const e = await new HttpClient({ baseUrl: base, retries: 0 })
      .request({ method: 'GET', path: '/endless', idempotent: true })
      .catch((x) => x);
    expect(e).toBeInstanceOf(ServiceError);
    expect(e).toMatchObject({ code: 'response_too_large', exitCode: 3 });
    expect(e.message).toMatch(/the service's answer to \/endless is larger than 4 MiB; loopsign stopped reading it/);
    // The server saw the connection close soon after the cap, not after its gigabyte.
    expect(await endlessClosed).toBeLessThan(64 * 1024 * 1024);
    // A caller may set its own cap (evidence downloads set a higher one).
    plan.push('endless');
    const small = await new HttpClient({ baseUrl: base, retries: 0, maxBytes: 100_000 })
      .request({ method: 'GET', path: '/e', idempotent: true })
      .catch((x) => x);
    expect(small.message).toMatch(/larger than 97.7 KiB/);
    // An idempotent call is not retried after a cap: the next request would be as large.
    plan.push('endless', 'ok');
    hits = 0;
    expect(
      (
        await client([])
          .request({ method: 'GET', path: '/e2', idempotent: true })
          .catch((x) => x)
      ).code,
    ).toBe('response_too_large');
    expect(hits).toBe(1);
    plan.length = 0;
  });

  it('retries a body that stalls or is cut off part-way, when the call is idempotent; not otherwise', async () => {
    const waits: number[] = [];
    plan.push('body-stall', 'body-reset');
    hits = 0;
    expect(await client(waits).request({ method: 'GET', path: '/b', idempotent: true, timeoutMs: 300 })).toEqual({ ok: 1 });
    expect(hits).toBe(3);
    expect(waits).toHaveLength(2);
    plan.push('body-stall');
    const e = await client([])
      .request({ method: 'POST', path: '/p', body: {}, idempotent: false, timeoutMs: 300 })
      .catch((x) => x);
    expect(e).toMatchObject({ code: 'service_unreachable', exitCode: 3 });
    expect(e.message).toMatch(/: timeout$/);
    plan.push('body-reset');
    const f = await client([])
      .request({ method: 'POST', path: '/p', body: {}, idempotent: false })
      .catch((x) => x);
    expect(f.message).toMatch(/: connection reset$/);
    plan.length = 0;
  });

  it('never follows a redirect: the 3xx is the answer, and its target is not asked', async () => {
    plan.push('redirect');
    hits = 0;
    const e = await new HttpClient({ baseUrl: base, retries: 0 }).request({ method: 'GET', path: '/r', idempotent: true }).catch((x) => x);
    expect(e).toBeInstanceOf(ServiceError);
    expect(e.details).toMatchObject({ status: 307 });
    expect(hits).toBe(1);
  });

  it('offers no compression, and says why a URL cannot be reached', async () => {
    plan.push('gzip-offer');
    const offered = await client([]).request<{ acceptEncoding: string | null }>({ method: 'GET', path: '/g', idempotent: true });
    expect(offered.acceptEncoding ?? 'identity').toBe('identity');
    // The reason is what the user sees (fetch said only "fetch failed", and kept it in its cause).
    const e = await new HttpClient({ baseUrl: 'http://loopsign-test.invalid', retries: 0 })
      .request({ method: 'GET', path: '/x', idempotent: true })
      .catch((x) => x);
    expect(e).toMatchObject({ code: 'service_unreachable', exitCode: 3 });
    expect(e.message).not.toMatch(/fetch failed/);
    expect(e.message).toMatch(/ENOTFOUND|EAI_AGAIN/);
  });

  it('refuses a declared content-length above the cap before reading', async () => {
    plan.push('huge-length');
    const e = await new HttpClient({ baseUrl: base, retries: 0 })
      .request({ method: 'GET', path: '/huge', idempotent: true })
      .catch((x) => x);
    expect(e).toMatchObject({ code: 'response_too_large', exitCode: 3 });
  });

  it("the RPC transport over node:http: answers read as viem reads them, an endless one cut off after viem's cap", async () => {
    const rpc = createPublicClient({ transport: rpcTransport(base, { retryCount: 0, timeout: 10_000 }) });
    plan.push('rpc-chain-id');
    expect(await rpc.getChainId()).toBe(31337);
    plan.push('endless');
    const e = await rpc.getChainId().catch((x) => x);
    expect(String(e?.shortMessage ?? e)).toMatch(/exceeded the size/);
    expect(await endlessClosed).toBeLessThan(64 * 1024 * 1024);
    plan.push('503');
    const f = await rpc.getChainId().catch((x) => x);
    expect(f?.status ?? f?.cause?.status).toBe(503);
    plan.length = 0;
  });

  it('caps MCP answers the same way (the SDK transport reads through the cap)', async () => {
    plan.push('endless');
    const mcp = new McpClient(base, 1024 * 1024);
    const e = await mcp.call('rateloop_get_rating_context', {}).catch((x) => x);
    await mcp.close();
    expect(e).toBeInstanceOf(ServiceError);
    expect(e).toMatchObject({ code: 'response_too_large', exitCode: 3 });
    expect(await endlessClosed).toBeLessThan(64 * 1024 * 1024);
    plan.length = 0;
  });
});
