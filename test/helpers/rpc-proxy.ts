// A JSON-RPC proxy in front of the sandbox's anvil that changes timing only, never an answer: it can delay every
// request (a slow node), and it can hold requests until several have arrived and then forward them all at once (so
// processes started together reach the node, and what follows, at the same moment).
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RpcProxy {
  url: string;
  /** Methods forwarded, in order. */
  forwarded: string[];
  /** Holds the next requests until `count` are held (or `timeoutMs` passed), then lets them all go together. */
  gate(count: number, timeoutMs?: number): void;
  close(): Promise<void>;
}

export async function startRpcProxy(target: string, options: { delayMs?: number } = {}): Promise<RpcProxy> {
  let held: (() => void)[] = [];
  let gate: { count: number; timer: NodeJS.Timeout } | undefined;
  const open = () => {
    if (gate) clearTimeout(gate.timer);
    gate = undefined;
    const go = held;
    held = [];
    for (const g of go) g();
  };
  const proxy: RpcProxy = {
    url: '',
    forwarded: [],
    gate: (count, timeoutMs = 5000) => {
      gate = { count, timer: setTimeout(open, timeoutMs) };
    },
    close: async () => {},
  };
  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    if (gate) {
      const wait = new Promise<void>((resolve) => held.push(resolve));
      if (held.length >= gate.count) open();
      await wait;
    }
    if (options.delayMs) await new Promise((r) => setTimeout(r, options.delayMs));
    try {
      const parsed = JSON.parse(body) as { method?: string } | { method?: string }[];
      for (const m of Array.isArray(parsed) ? parsed : [parsed]) proxy.forwarded.push(m.method ?? '?');
    } catch {
      proxy.forwarded.push('?');
    }
    try {
      const answer = await fetch(target, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      res.writeHead(answer.status, { 'content-type': 'application/json' }).end(await answer.text());
    } catch {
      res.destroy();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  proxy.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  proxy.close = async () => {
    open();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return proxy;
}
