// A simulation the EVM itself failed is the node's verdict on the call, however the node words it: anvil (the sandbox's
// node, and any local fork) answers an INVALID opcode, a bad jump or a stack underflow as -32603 "EVM error …", geth as
// -32000 "invalid opcode: INVALID". nodeErrorNotRevert took those for the node's failure (rpc_failed, exit 4, "run
// again"), so an atomic batch that could only ever fail was reported as a flaky node instead of the refusal
// atomic_simulation_reverted (exit 5), and an agent retried it for good (helper-37). A rate limit stays the node's.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import { createPublicClient, http } from 'viem';
import { nodeErrorNotRevert } from '../src/errors.js';

let server: Server;
let url: string;
let answer: { code: number; message: string } = { code: -32603, message: '' };

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      const rpc = JSON.parse(body) as { id: number };
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id: rpc.id, error: answer }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(() => {
  server.closeAllConnections();
  server.close();
});

async function estimateError(error: { code: number; message: string }): Promise<unknown> {
  answer = error;
  const client = createPublicClient({ transport: http(url, { retryCount: 0 }) });
  return client
    .estimateGas({ account: '0x0000000000000000000000000000000000000001', to: '0x0000000000000000000000000000000000000002', data: '0x' })
    .then(
      () => undefined,
      (e: unknown) => e,
    );
}

describe("a simulation's error answer", () => {
  it.each([
    [-32603, 'EVM error InvalidFEOpcode'],
    [-32603, 'EVM error InvalidJump'],
    [-32603, 'EVM error StackUnderflow'],
    [-32000, 'invalid opcode: INVALID'],
    [-32000, 'invalid jump destination'],
    [-32000, 'stack underflow (0 <=> 2)'],
    [-32000, 'out of gas'],
  ])('%i "%s" is the EVM failing the call: a verdict, not the node failing', async (code, message) => {
    const error = await estimateError({ code, message });
    expect(error).toBeInstanceOf(Error);
    expect(nodeErrorNotRevert(error)).toBe(false);
  });

  it.each([
    [-32005, 'limit exceeded'],
    [-32603, 'internal error'],
    [-32000, 'header not found'],
  ])('%i "%s" names nothing of the call: the node failing', async (code, message) => {
    expect(nodeErrorNotRevert(await estimateError({ code, message }))).toBe(true);
  });
});
