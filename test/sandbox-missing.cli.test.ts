// Never production by accident (issue 36, item 3): on the sandbox chain (31337) with no sandbox manifest where the
// configuration points, quote and ask (CLI and MCP) stop with exit 2 naming the manifest path and `loopsign sandbox`,
// before anything is sent: a local HTTP listener standing in for the service and the RPC receives nothing, and no
// hint suggests another chain (the fallback used to be the production service, and the hint `--chain-id 8453`).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeHome, runCli, TEST_PRIVATE_KEY } from './helpers/cli.js';
import { startMcp } from './helpers/mcp.js';

let server: Server;
let url = '';
const received: string[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    received.push(`${req.method} ${req.url}`);
    res.writeHead(500).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const ask = {
  chainId: 31337,
  clientRequestId: 'sandbox-missing-1',
  maxPaymentAmount: '1500000',
  bounty: { amount: '1500000', asset: 'USDC', requiredVoters: '3' },
  question: { title: 'Is the sandbox running?', contextUrl: 'https://example.com/ctx', categoryId: '1', tags: ['t'] },
};

function expectRefused(doc: any, manifest: string): void {
  expect(doc.ok).toBe(false);
  expect(doc.error.code).toBe('sandbox_not_running');
  expect(doc.error.exitCode).toBe(2);
  expect(doc.error.message).toContain(manifest);
  expect(doc.error.hint).toMatch(/loopsign sandbox/);
  expect(JSON.stringify(doc)).not.toMatch(/8453|84532|production/);
}

describe('chain 31337 without a sandbox manifest', () => {
  for (const command of [['quote'], ['ask', '--no-confirm']]) {
    for (const withBaseUrl of [true, false]) {
      it(`${command[0]} ${withBaseUrl ? 'with' : 'without'} a base URL is exit 2 and sends nothing`, async () => {
        const home = makeHome();
        const manifest = path.join(home.dir, 'gone', 'manifest.json');
        const file = home.file('ask.json', JSON.stringify(ask));
        const r = await runCli(['--json', ...command, '--file', file], home, {
          env: {
            LOOPSIGN_CHAIN_ID: '31337',
            LOOPSIGN_SANDBOX_MANIFEST: manifest,
            LOOPSIGN_RPC_URL: url,
            ...(withBaseUrl ? { LOOPSIGN_BASE_URL: url } : {}),
            LOOPSIGN_PRIVATE_KEY: TEST_PRIVATE_KEY,
          },
        });
        expect(r.code, r.stdout + r.stderr).toBe(2);
        expectRefused(r.json(), manifest);
        expect(received).toEqual([]);
      });
    }
  }

  it('over MCP: the tool error names the manifest and `loopsign sandbox`, never another chain', async () => {
    const home = makeHome();
    const manifest = path.join(home.dir, 'gone', 'manifest.json');
    const m = await startMcp(home, {
      env: {
        LOOPSIGN_CHAIN_ID: '31337',
        LOOPSIGN_SANDBOX_MANIFEST: manifest,
        LOOPSIGN_RPC_URL: url,
        LOOPSIGN_BASE_URL: url,
        LOOPSIGN_PRIVATE_KEY: TEST_PRIVATE_KEY,
      },
      roots: false,
    });
    for (const tool of ['loopsign_quote', 'loopsign_ask']) {
      const r = await m.call(tool, { ask, paymentMode: 'wallet_calls' });
      expect(r.isError, JSON.stringify(r.doc)).toBe(true);
      expectRefused(r.doc, manifest);
    }
    expect(await m.stop()).toBe(0);
    expect(received).toEqual([]);
  });
});
