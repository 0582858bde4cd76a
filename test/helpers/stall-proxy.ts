// A JSON-RPC proxy in front of the sandbox's anvil that can stall, as a hung node or load balancer does: the
// connection is accepted and the request read, but no answer ever comes. Modes:
// - 'pass': forward everything;
// - 'stall': answer nothing;
// - 'stall-after-send': forward requests, including the first eth_sendRawTransaction (so the transaction does
//   reach the chain), but never answer that one or anything after it;
// - 'reset-after-send': forward everything, but drop the connection instead of answering the first
//   eth_sendRawTransaction (which did reach the chain); answer everything after it;
// - 'latest-fails': answer every read of the latest block with a JSON-RPC error (as an overloaded provider fails
//   some requests), forward everything else;
// - 'latest-fails-once-after-send': once a transaction went through, fail the next read of the latest block, once;
// - 'pending-hangs-after-send': once a transaction went through, never answer a read of the pending block (counting,
//   at each eth_sendRawTransaction, how many such reads are still open);
// - 'receipts-empty-after-send': forward everything, but answer the first six receipt reads after the first
//   eth_sendRawTransaction with an empty 204 (as a flaky load balancer does), more than the transport retries;
// - 'tx-reads-fail': answer every read of a transaction or its receipt with a 503 (a provider that fails some
//   requests), forward everything else;
// - 'receipts-fail-once-mined': forward everything, but answer with a 503 every read of a receipt the node has
//   already given (the transaction is mined, its receipt was read once, and from then on the provider fails);
// - 'simulations-fail': answer with a 503 every gas estimate, and every eth_call a wallet makes to itself (the
//   simulation of an atomic batch), forward everything else;
// - 'simulations-rpc-error': as 'simulations-fail', but a JSON-RPC error answer that names no revert (-32005, limit
//   exceeded), as a provider's rate limit does;
// - 'estimates-garbage': answer every gas estimate with a result that is not hex ("0xzz");
// - 'genesis-lies': forward everything, but answer block 0 with another hash (a node that lies about which chain
//   instance it serves);
// - 'receipts-null-once-mined': as 'receipts-fail-once-mined', but the receipt already given is then answered null (no
//   such receipt), as a load balancer's backend behind the one that gave it does;
// - 'reads-lag-one-tx': a load balancer whose reading backend is one transaction behind the one that takes them:
//   every read of a transaction or its receipt answers null (no such transaction), and every latest-block nonce
//   read one less than the node's; eth_sendRawTransaction reaches the node itself (which may say "nonce too low");
// - 'pending-count-one-behind': a node whose pending nonce lags one behind its latest state (a pool that has not caught
//   up with the block that mined the wallet's last transaction, or that counts each transaction it took as one nonce):
//   every pending nonce read answers one less than the node's; everything else, latest-block nonce reads included, is
//   the node's own.
// - 'logs-empty': every eth_getLogs answered with no logs (a provider whose log index lags behind its head, or a node
//   that hides events); everything else is the node's own.
// - 'finalized-fails': answer every read of the finalized or safe block with a JSON-RPC error (a provider that does
//   not serve those tags, or is overloaded), forward everything else.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type StallMode =
  | 'pass'
  | 'stall'
  | 'stall-after-send'
  | 'reset-after-send'
  | 'latest-fails'
  | 'latest-fails-once-after-send'
  | 'pending-hangs-after-send'
  | 'receipts-empty-after-send'
  | 'tx-reads-fail'
  | 'receipts-fail-once-mined'
  | 'simulations-fail'
  | 'simulations-rpc-error'
  | 'estimates-garbage'
  | 'genesis-lies'
  | 'reads-lag-one-tx'
  | 'pending-count-one-behind'
  | 'receipts-null-once-mined'
  | 'logs-empty'
  | 'finalized-fails';

export interface StallProxy {
  url: string;
  mode: StallMode;
  forwarded: string[];
  /** The raw transactions of the eth_sendRawTransaction requests forwarded, in order. */
  sent: string[];
  /** Reads failed on purpose ('latest-fails-once-after-send'). */
  failed: number;
  /** At each eth_sendRawTransaction, how many reads of the pending block were held unanswered. */
  openPendingAtSends: number[];
  close(): Promise<void>;
}

export async function startStallProxy(target: string, mode: StallMode): Promise<StallProxy> {
  const held: ServerResponse[] = [];
  let stalled = mode === 'stall';
  let emptied = 0;
  const proxy: StallProxy = { url: '', mode, forwarded: [], sent: [], failed: 0, openPendingAtSends: [], close: async () => {} };
  let openPending = 0;
  /** Transactions whose receipt the node has given ('receipts-fail-once-mined'). */
  const mined = new Set<string>();
  // A JSON-RPC error answer. -32603 (internal error) is one viem retries; -32000 (a node's own error) is not.
  const fail = (res: ServerResponse, id: unknown, code: number, message: string) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ jsonrpc: '2.0', id: id ?? null, error: { code, message } }));
  };
  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    if (stalled) {
      held.push(res);
      return;
    }
    const call = JSON.parse(body) as { id?: unknown; method?: string; params?: unknown[] };
    const method = call.method ?? '?';
    const block = method === 'eth_getBlockByNumber' ? String(call.params?.[0]) : '';
    if (proxy.mode === 'latest-fails' && block === 'latest') {
      proxy.forwarded.push(`${method} (failed)`);
      return fail(res, call.id, -32603, 'the node is overloaded (test)');
    }
    if (proxy.mode === 'logs-empty' && method === 'eth_getLogs') {
      proxy.forwarded.push(`${method} (empty)`);
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ jsonrpc: '2.0', id: call.id ?? null, result: [] }));
    }
    if (proxy.mode === 'finalized-fails' && (block === 'finalized' || block === 'safe')) {
      proxy.forwarded.push(`${method} ${block} (failed)`);
      return fail(res, call.id, -32000, 'finalized block not available (test)');
    }
    if (proxy.mode === 'receipts-empty-after-send' && method === 'eth_getTransactionReceipt' && proxy.sent.length > 0 && emptied < 6) {
      emptied++;
      proxy.forwarded.push(`${method} (empty)`);
      return res.writeHead(204).end();
    }
    if (proxy.mode === 'tx-reads-fail' && (method === 'eth_getTransactionReceipt' || method === 'eth_getTransactionByHash')) {
      proxy.forwarded.push(`${method} (failed)`);
      return res.writeHead(503, { 'content-type': 'text/plain' }).end('overloaded (test)');
    }
    if (proxy.mode === 'receipts-fail-once-mined' && method === 'eth_getTransactionReceipt' && mined.has(String(call.params?.[0]))) {
      proxy.forwarded.push(`${method} (failed)`);
      return res.writeHead(503, { 'content-type': 'text/plain' }).end('overloaded (test)');
    }
    if (proxy.mode === 'reads-lag-one-tx' && (method === 'eth_getTransactionReceipt' || method === 'eth_getTransactionByHash')) {
      proxy.forwarded.push(`${method} (null)`);
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ jsonrpc: '2.0', id: call.id ?? null, result: null }));
    }
    if (
      method === 'eth_getTransactionCount' &&
      ((proxy.mode === 'reads-lag-one-tx' && call.params?.[1] === 'latest') ||
        (proxy.mode === 'pending-count-one-behind' && call.params?.[1] === 'pending'))
    ) {
      proxy.forwarded.push(`${method} (one behind)`);
      const answer = (await (await fetch(target, { method: 'POST', headers: { 'content-type': 'application/json' }, body })).json()) as {
        result: string;
      };
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ jsonrpc: '2.0', id: call.id ?? null, result: `0x${(BigInt(answer.result) - 1n).toString(16)}` }));
    }
    if (proxy.mode === 'receipts-null-once-mined' && method === 'eth_getTransactionReceipt' && mined.has(String(call.params?.[0]))) {
      proxy.forwarded.push(`${method} (null)`);
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ jsonrpc: '2.0', id: call.id ?? null, result: null }));
    }
    const self = (c: unknown) => {
      const { from, to } = (c ?? {}) as { from?: string; to?: string };
      return typeof from === 'string' && from.toLowerCase() === to?.toLowerCase();
    };
    if (proxy.mode === 'simulations-fail' && (method === 'eth_estimateGas' || (method === 'eth_call' && self(call.params?.[0])))) {
      proxy.forwarded.push(`${method} (failed)`);
      return res.writeHead(503, { 'content-type': 'text/plain' }).end('overloaded (test)');
    }
    if (proxy.mode === 'simulations-rpc-error' && (method === 'eth_estimateGas' || (method === 'eth_call' && self(call.params?.[0])))) {
      proxy.forwarded.push(`${method} (failed)`);
      return fail(res, call.id, -32005, 'limit exceeded (test)');
    }
    if (proxy.mode === 'estimates-garbage' && method === 'eth_estimateGas') {
      proxy.forwarded.push(`${method} (garbage)`);
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ jsonrpc: '2.0', id: call.id ?? null, result: '0xzz' }));
    }
    if (proxy.mode === 'latest-fails-once-after-send' && proxy.sent.length > 0 && block === 'latest' && proxy.failed === 0) {
      proxy.failed++;
      proxy.forwarded.push(`${method} (failed)`);
      return fail(res, call.id, -32000, 'header not found');
    }
    if (proxy.mode === 'pending-hangs-after-send' && proxy.sent.length > 0 && block === 'pending') {
      openPending++;
      res.on('close', () => openPending--);
      held.push(res);
      return;
    }
    if (method === 'eth_sendRawTransaction') proxy.openPendingAtSends.push(openPending);
    proxy.forwarded.push(method);
    if (method === 'eth_sendRawTransaction') proxy.sent.push(String(call.params?.[0]));
    const answer = await fetch(target, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    const text = await answer.text();
    if (method === 'eth_getTransactionReceipt' && (JSON.parse(text) as { result?: unknown }).result) mined.add(String(call.params?.[0]));
    if (proxy.mode === 'reset-after-send' && method === 'eth_sendRawTransaction') {
      proxy.mode = 'pass';
      return req.socket.destroy();
    }
    if (proxy.mode === 'stall-after-send' && method === 'eth_sendRawTransaction') {
      stalled = true;
      held.push(res);
      return;
    }
    if (proxy.mode === 'genesis-lies' && block === '0x0') {
      const doc = JSON.parse(text) as { result?: { hash?: string } };
      if (doc.result?.hash) doc.result.hash = `0x${'6e'.repeat(32)}`;
      return res.writeHead(answer.status, { 'content-type': 'application/json' }).end(JSON.stringify(doc));
    }
    res.writeHead(answer.status, { 'content-type': 'application/json' }).end(text);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  proxy.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  proxy.close = async () => {
    for (const r of held) r.destroy();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return proxy;
}
