// A local HTTP server that answers with recorded responses, one per request, in order — so loopsign's real
// clients (the MCP SDK transport, undici) meet exactly what the live service answered. A JSON-RPC answer gets the
// id of the request it answers (the recording's id belonged to the recorder's request). Requests are kept so a
// test can check what loopsign sent.
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Recorded {
  status: number;
  headers: Record<string, string>;
  body?: unknown;
  bodyText?: string;
}

export interface SeenRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: string;
}

export interface Replay {
  url: string;
  queue(...responses: Recorded[]): void;
  requests: SeenRequest[];
  /** Responses queued but not asked for. */
  pending(): number;
  close(): Promise<void>;
}

export async function replayServer(): Promise<Replay> {
  const queue: Recorded[] = [];
  const requests: SeenRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      requests.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body });
      const next = queue.shift();
      if (!next) {
        res.writeHead(599, { 'content-type': 'text/plain' }).end('replay: no response queued');
        return;
      }
      let text = next.bodyText ?? (next.body === undefined ? '' : JSON.stringify(next.body));
      if (next.body && typeof next.body === 'object' && 'jsonrpc' in (next.body as object) && (next.body as { id?: unknown }).id !== null) {
        try {
          const id = (JSON.parse(body) as { id?: unknown }).id;
          if (id !== undefined) text = JSON.stringify({ ...(next.body as object), id });
        } catch {
          // not JSON: keep the recorded id
        }
      }
      const headers = Object.fromEntries(Object.entries(next.headers).filter(([k]) => k !== 'content-length' && k !== 'transfer-encoding'));
      res.writeHead(next.status, headers).end(text);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    queue: (...r) => queue.push(...r),
    requests,
    pending: () => queue.length,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
