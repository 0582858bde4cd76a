// viem's JSON-RPC over HTTP, as a viem transport of loopsign's own that sends each request over node:http
// (src/service/node-http.ts). viem's `http` transport builds fetch's Headers for every request and reads a fetch
// Response: those classes load node's bundled undici, ~20 ms of CPU in every run that talks to the chain, where
// node:http is already loaded. What a caller sees is what viem's http transport gives: the same answers, the same
// errors (HttpRequestError, RpcRequestError, TimeoutError, ResponseBodyTooLargeError, with the same fields), so
// viem's retry rules and loopsign's reading of them (src/errors.ts, src/chains/client.ts) are unchanged. Where an
// answer is one fetch would have handled differently (a redirect, compression, a status no Response can carry, an
// empty body), it is refused in words, as it was when node:http stood in for fetch under viem's transport. One
// deliberate difference: a Retry-After longer than the request timeout is not handed to viem's retry (headersOf).
import {
  createTransport,
  HttpRequestError,
  ResponseBodyTooLargeError,
  RpcRequestError,
  stringify,
  TimeoutError,
  type EIP1193RequestFn,
  type Transport,
} from 'viem';
import { discardBody } from '../service/cap.js';
import { httpRequest, NO_DEADLINE, refusedAnswer, type HttpAnswer } from '../service/node-http.js';

export interface RpcTransportConfig {
  /** Longest wait for one request, answer read whole included (viem's `timeout`). */
  timeout: number;
  /** How many times a failed request is sent again, by viem's rules (viem's `retryCount`). */
  retryCount: number;
}

/** viem's own cap on one answer (its default `maxResponseBodySize`). */
const MAX_BODY = 10_485_760;

type RpcBody = { method: string; params?: unknown };
type RpcAnswer = { result?: unknown; error?: { code: number; message: string; data?: unknown } };

let nextId = 0;

export function rpcTransport(url: string, config: RpcTransportConfig): Transport<'http'> {
  return () => {
    const target = splitCredentials(url);
    return createTransport(
      {
        key: 'http',
        name: 'HTTP JSON-RPC',
        type: 'http',
        retryCount: config.retryCount,
        timeout: config.timeout,
        // viem types a request's answer by its method; an RPC's answer is whatever JSON it sent, read as that.
        request: (async ({ method, params }: RpcBody, options?: { signal?: AbortSignal }) => {
          const body = { method, params };
          const answer = await post(target, body, config.timeout, options?.signal);
          if (answer.error) throw new RpcRequestError({ body, error: answer.error, url });
          return answer.result;
        }) as EIP1193RequestFn,
      },
      { url, fetchOptions: undefined },
    ) as ReturnType<Transport<'http'>>;
  };
}

/** The URL without its user and password, which go in an Authorization header instead, as viem sends them. */
function splitCredentials(url: string): { url: string; headers: Record<string, string> } {
  try {
    const parsed = new URL(url);
    if (!parsed.username) return { url: parsed.toString(), headers: {} };
    const credentials = `${decodeURIComponent(parsed.username)}:${decodeURIComponent(parsed.password)}`;
    parsed.username = '';
    parsed.password = '';
    return { url: parsed.toString(), headers: { authorization: `Basic ${btoa(credentials)}` } };
  } catch {
    return { url, headers: {} };
  }
}

/** One request and its answer read whole, failing as viem's HTTP client fails (viem/utils/rpc/http.ts). */
async function post(
  target: { url: string; headers: Record<string, string> },
  body: RpcBody,
  timeout: number,
  signal?: AbortSignal,
): Promise<RpcAnswer> {
  const { url } = target;
  const timer = new AbortController();
  const clock = timeout > 0 ? setTimeout(() => timer.abort(), timeout) : undefined;
  const stop = () => timer.abort();
  signal?.addEventListener('abort', stop, { once: true });
  try {
    const res = await httpRequest(url, {
      method: 'POST',
      headers: { ...target.headers, 'content-type': 'application/json' },
      body: stringify({ jsonrpc: '2.0', id: nextId++, ...body }),
      // The request's own deadline is `timeout` (the abort above), which has no upper bound.
      headersTimeoutMs: NO_DEADLINE,
      bodyTimeoutMs: NO_DEADLINE,
      signal: timer.signal,
    });
    const refusal = refusedAnswer(res, url);
    if (refusal) {
      discardBody(res.body);
      throw new Error(refusal);
    }
    const text = await readWhole(res);
    const ok = res.status >= 200 && res.status < 300;
    if (text === '' && ok) throw new Error(`the RPC answered ${res.status} with an empty body, which is no JSON-RPC answer`);
    let data: any;
    if (res.header('content-type')?.startsWith('application/json')) data = JSON.parse(text);
    else {
      try {
        data = JSON.parse(text || '{}');
      } catch (error) {
        if (ok) throw error;
        data = { error: text };
      }
    }
    if (!ok) {
      // Only here are fetch's Headers made: viem's retry reads Retry-After from them.
      const headers = headersOf(res, timeout);
      if (typeof data?.error?.code === 'number' && typeof data?.error?.message === 'string') {
        throw new RpcRequestError({ body, error: data.error, headers, status: res.status, url });
      }
      // fetch reads the reason phrase's bytes as UTF-8, node:http as Latin-1: read back as fetch gives it.
      const statusText = Buffer.from(res.statusText, 'latin1').toString('utf8');
      throw new HttpRequestError({ body, details: stringify(data.error) || statusText, headers, status: res.status, url });
    }
    return data as RpcAnswer;
  } catch (error) {
    if (signal?.aborted) throw signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
    if (timer.signal.aborted) throw new TimeoutError({ body, url });
    if (
      error instanceof HttpRequestError ||
      error instanceof RpcRequestError ||
      error instanceof ResponseBodyTooLargeError ||
      (error as Error)?.name === 'AbortError'
    ) {
      throw error;
    }
    throw new HttpRequestError({ body, cause: error as Error, url });
  } finally {
    clearTimeout(clock);
    signal?.removeEventListener('abort', stop);
  }
}

/** The answer's body as text, refused past viem's cap (by its declared length before any of it is read). */
async function readWhole(res: HttpAnswer): Promise<string> {
  const declared = res.header('content-length');
  if (declared && Number(declared) > MAX_BODY) {
    discardBody(res.body);
    throw new ResponseBodyTooLargeError({ maxSize: MAX_BODY, size: Number(declared) });
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of res.body) {
    size += chunk.byteLength;
    // Leaving the loop closes the connection: an endless answer is not read on.
    if (size > MAX_BODY) throw new ResponseBodyTooLargeError({ maxSize: MAX_BODY, size });
    chunks.push(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
  }
  // Decoded as fetch's body is (viem reads it with a TextDecoder): a leading byte order mark is dropped, where
  // Buffer's toString keeps it and JSON.parse then fails on it.
  return new TextDecoder().decode(Buffer.concat(chunks, size));
}

/**
 * fetch's Headers of the answer, from every header line (viem's retry reads Retry-After, repeated or not, from them),
 * but for a Retry-After that asks a longer wait than one request may take. viem waits whatever a node asks before
 * each retry (up to 24.8 days, twice): a node answering 429 with "Retry-After: 86400" held a command silent for
 * days, where docs/cli.md promises that a failing node fails the command after the RPC timeout and two retries.
 * Without it, viem's own backoff applies (150 ms, then 300), and a node that keeps refusing fails the command.
 */
function headersOf(res: HttpAnswer, timeout: number): Headers {
  const headers = new Headers();
  for (let i = 0; i + 1 < res.rawHeaders.length; i += 2) headers.append(res.rawHeaders[i]!, res.rawHeaders[i + 1]!);
  const retryAfter = headers.get('retry-after');
  if (retryAfter && timeout > 0 && retryAfterMs(retryAfter) > timeout) headers.delete('retry-after');
  return headers;
}

/** How long viem waits for a Retry-After (src: viem/utils/buildRequest.ts): seconds, or an HTTP date; 0 for neither. */
function retryAfterMs(value: string): number {
  const seconds = Number.parseInt(value, 10);
  if (!Number.isNaN(seconds)) return seconds * 1000;
  const delay = Date.parse(value) - Date.now();
  return delay > 0 ? delay : 0;
}
