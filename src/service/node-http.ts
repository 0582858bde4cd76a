// HTTP requests over node's own http and https modules, with the deadlines loopsign needs. Not fetch, nor the undici
// package: both load undici and compile its HTTP parser (llhttp) to WebAssembly in every run that makes a request,
// where node:http's parser is native. One GET to a local server cost a fresh node process 0.068 CPU-s more with fetch
// (0.11 without the baseline-only WebAssembly flag), 0.075 with the undici package, and 0.008 with node:http
// (issue 23: loopsign runs a request or two in most commands, and the test suite runs it some 900 times). The service
// client, the gated reads and loopsign's viem transport for the RPC (src/chains/rpc-transport.ts) use it; the MCP
// SDK's transport and the JSON-RPC signer still use fetch.
//
// node's global agents keep connections alive (an idle one closed after 5 s, and never holding the process open).
// Redirects are never followed: the 3xx is the answer. No compression is offered, so a byte cap counts what arrived.
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type { Body } from './cap.js';

export interface HttpInit {
  method: string;
  headers: Record<string, string>;
  body?: string;
  /** Longest wait for the answer's status and headers (the request's body sent included). */
  headersTimeoutMs: number;
  /** Longest wait for each next piece of the body: a stalled answer is given up on, a slow one that keeps coming is not. */
  bodyTimeoutMs: number;
  /** Ends the request, and the read of its body, when it aborts. */
  signal?: AbortSignal;
  /**
   * On a connection of its own, never a kept-alive one: for a request that is not safe to send twice. A server may
   * close a kept-alive connection just as it is reused; the request then fails unsent-or-not, and one that must not
   * be repeated cannot be retried (undici opened a new connection there; node's agent reuses the closing one).
   */
  freshConnection?: boolean;
}

export interface HttpAnswer {
  status: number;
  statusText: string;
  headers: IncomingHttpHeaders;
  /** Every header line as it came, name and value in turn (node:http's `headers` keeps only the first of some). */
  rawHeaders: string[];
  /** A header's value as fetch gives it (every line of that name joined with ", "), or undefined when absent. */
  header(name: string): string | undefined;
  /** The body, read once; leaving the read early, or discardBody, closes the connection. */
  body: Body;
}

/** A deadline that passed: named as a timeout, with undici's codes, which the retry rules read as a network failure. */
function deadline(what: 'headers' | 'body', ms: number): Error {
  const error = new Error(`no ${what === 'headers' ? 'answer' : 'more of the answer'} within ${ms / 1000} s`);
  error.name = 'TimeoutError';
  (error as Error & { code: string }).code = what === 'headers' ? 'UND_ERR_HEADERS_TIMEOUT' : 'UND_ERR_BODY_TIMEOUT';
  return error;
}

export async function httpRequest(url: string | URL, init: HttpInit): Promise<HttpAnswer> {
  const target = new URL(url);
  if (target.protocol !== 'http:' && target.protocol !== 'https:') throw new Error(`not an http(s) URL: ${target.protocol}`);
  const { request } = target.protocol === 'https:' ? await import('node:https') : await import('node:http');
  return new Promise<HttpAnswer>((resolve, reject) => {
    const headers: Record<string, string> = { 'accept-encoding': 'identity' };
    // A header whose value is absent is not sent (node:http would refuse the whole request).
    for (const [name, value] of Object.entries(init.headers)) if (value !== undefined && value !== null) headers[name] = value;
    if (init.body !== undefined) headers['content-length'] = String(Buffer.byteLength(init.body));
    const req = request(target, { method: init.method, headers, signal: init.signal, ...(init.freshConnection ? { agent: false } : {}) });
    let timer = setTimeout(() => req.destroy(deadline('headers', init.headersTimeoutMs)), init.headersTimeoutMs);
    let answered = false;
    req.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    // A 101 (a protocol switch nobody asked for) is no 'response': without this listener node:http destroys the
    // socket and the request ends with neither an answer nor an error, so the promise would never settle (and a
    // deadline's destroy of a request already destroyed does nothing).
    req.on('upgrade', (res: IncomingMessage, socket) => {
      answered = true;
      clearTimeout(timer);
      socket.destroy();
      reject(new Error(`the server answered ${res.statusCode} ${res.statusMessage ?? ''}, a switch of protocol that was not asked for`));
    });
    // Any other way the request ends without an answer or an error.
    req.on('close', () => {
      if (answered) return;
      clearTimeout(timer);
      reject(Object.assign(new Error('the connection closed before an answer came'), { code: 'ECONNRESET' }));
    });
    req.on('response', (res: IncomingMessage) => {
      answered = true;
      clearTimeout(timer);
      const arm = () => {
        clearTimeout(timer);
        timer = setTimeout(() => res.destroy(deadline('body', init.bodyTimeoutMs)), init.bodyTimeoutMs);
      };
      async function* chunks(): AsyncGenerator<Uint8Array> {
        arm();
        try {
          // Leaving this loop early (a byte cap, an error) destroys the response, closing its connection.
          for await (const chunk of res) {
            clearTimeout(timer);
            yield chunk as Buffer;
            arm();
          }
        } finally {
          clearTimeout(timer);
        }
      }
      const body: Body = Object.assign(chunks(), {
        destroy: (error?: Error) => res.destroy(error),
        on: (event: 'error', listener: () => void) => res.on(event, listener),
      });
      resolve({
        status: res.statusCode ?? 0,
        statusText: res.statusMessage ?? '',
        headers: res.headers,
        rawHeaders: res.rawHeaders,
        // As fetch's Headers give it: every line of that name, joined (node:http's `headers` keeps only the first
        // of some, such as Retry-After and Content-Type).
        header: (name) => {
          const wanted = name.toLowerCase();
          const values: string[] = [];
          for (let i = 0; i + 1 < res.rawHeaders.length; i += 2)
            if (res.rawHeaders[i]!.toLowerCase() === wanted) values.push(res.rawHeaders[i + 1]!);
          return values.length ? values.join(', ') : undefined;
        },
        body,
      });
    });
    req.end(init.body);
  });
}

/**
 * What makes an RPC's answer one that viem cannot be handed as fetch would have, in words (undefined when none):
 * a status outside 200-599 (no Response can carry it), a body compressed although only identity was accepted (fetch
 * asked for compression and decoded it), and a redirect (fetch followed it; loopsign never does).
 */
export function refusedAnswer(res: HttpAnswer, url: string | URL): string | undefined {
  if (res.status < 200 || res.status > 599) return `the RPC answered with HTTP status ${res.status}, which is not a valid status`;
  const encoding = res.header('content-encoding')?.trim().toLowerCase();
  if (encoding && encoding !== 'identity') {
    return `the RPC answered in content-encoding ${encoding.slice(0, 40)}, which loopsign did not accept (it asks for identity)`;
  }
  const location = res.header('location');
  if ([301, 302, 303, 307, 308].includes(res.status) && location !== undefined) {
    let target = 'elsewhere';
    try {
      const to = new URL(location, url);
      target = `to ${to.protocol}//${to.host}`;
    } catch {
      // no usable Location: "elsewhere"
    }
    return `the RPC answered ${res.status}, a redirect ${target}; loopsign does not follow an RPC's redirects: give the URL it redirects to`;
  }
  return undefined;
}

/** A deadline that never comes first (setTimeout's longest, about 24.8 days). */
export const NO_DEADLINE = 2 ** 31 - 1;
