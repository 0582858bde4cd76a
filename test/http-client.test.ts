// The service client's retry rules, against a local server that misbehaves on purpose.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import { HttpClient } from '../src/service/http.js';
import { ServiceError } from '../src/errors.js';

let server: Server;
let base: string;
const plan: string[] = []; // what the server does for the next requests, in order
let hits = 0;

beforeAll(async () => {
  server = createServer((req, res) => {
    hits++;
    const action = plan.shift() ?? 'ok';
    if (action === 'reset') return req.socket.destroy();
    if (action === 'stall') return; // never answers
    const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(JSON.stringify(body));
    };
    if (action === '429') return send(429, { code: 'rate_limit_exceeded', message: 'Too many requests', recoverWith: 'retry_after_delay', retryable: true, status: 429 }, { 'retry-after': '1' });
    if (action === '503') return send(503, { code: 'service_unavailable', message: 'down', retryable: true, status: 503 });
    if (action === '400') return send(400, { code: 'invalid_arguments', message: 'bad', recoverWith: 'fix_request_and_retry', retryable: false, status: 400 });
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
    const e = await client([]).request({ method: 'POST', path: '/x', body: {}, idempotent: true }).catch((x) => x);
    expect(e).toBeInstanceOf(ServiceError);
    expect(e.code).toBe('invalid_arguments');
    expect(e.details).toMatchObject({ status: 400, retryable: false, recoverWith: 'fix_request_and_retry' });
    expect(hits).toBe(1);
    plan.push('503');
    hits = 0;
    const f = await client([]).request({ method: 'POST', path: '/y', body: {}, idempotent: false }).catch((x) => x);
    expect(f.code).toBe('service_unavailable');
    expect(hits).toBe(1);
  });

  it('gives up after the retries with the last error, and parses non-envelope errors', async () => {
    plan.push('503', '503', '503', '503');
    const e = await client([]).request({ method: 'GET', path: '/z', idempotent: true }).catch((x) => x);
    expect(e.code).toBe('service_unavailable');
    plan.push('text500');
    const g = await new HttpClient({ baseUrl: base, retries: 0 }).request({ method: 'GET', path: '/t', idempotent: true }).catch((x) => x);
    expect(g.code).toBe('http_500');
    expect(g.message).toMatch(/oops/);
  });
});
