// The smoke test of `loopsign mcp` over stdio (the built binary, spawned as a host spawns it, the official SDK
// client on its stdin/stdout): with no policy file and no sandbox, the server starts under its built-in default
// policy and says so on stderr, answers tools/list, loopsign_policy (the default, and how to change it), a tool that
// warns (a log message) and an inline ask refused above the default; and its stdout carries JSON-RPC only.
import { describe, expect, it } from 'vitest';
import { makeHome, TEST_PRIVATE_KEY } from './helpers/cli.js';
import { nonProtocolLines, startMcp } from './helpers/mcp.js';
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

describe('loopsign mcp over stdio', () => {
  it('stdout is protocol only; with no policy file the built-in default applies and is said', async () => {
    const home = makeHome();
    // Chain 8453 with a throwaway key and an unreachable service: nothing here may reach a network.
    const m = await startMcp(home, {
      args: ['--chain-id', '8453', '--base-url', 'http://127.0.0.1:9'],
      env: { LOOPSIGN_PRIVATE_KEY: TEST_PRIVATE_KEY },
      roots: false,
    });
    const logs: string[] = [];
    m.client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void logs.push(JSON.stringify(n.params.data)));
    expect((await m.client.listTools()).tools.length).toBe(15);

    const policy = await m.call('loopsign_policy');
    expect(policy.isError, JSON.stringify(policy.doc)).toBe(false);
    expect(policy.doc).toMatchObject({ ok: true, chainId: 8453, builtInDefault: true, files: [{ source: 'built-in default' }] });
    expect(policy.doc.howToChange).toMatch(/policy\.json/);

    const address = await m.call('loopsign_wallet_address');
    expect(address.doc).toMatchObject({ ok: true, signer: 'LOOPSIGN_PRIVATE_KEY' });
    expect(logs.join('\n')).toMatch(/LOOPSIGN_PRIVATE_KEY/);

    const ask = {
      chainId: 8453,
      clientRequestId: `stdio-smoke-${process.pid}`,
      maxPaymentAmount: '9000000',
      bounty: { amount: '9000000', asset: 'USDC', requiredVoters: '3' },
      question: { title: 'Smoke', contextUrl: 'https://example.com/smoke', categoryId: '1', tags: ['smoke'] },
    };
    const refused = await m.call('loopsign_ask', { ask, paymentMode: 'wallet_calls' });
    expect(refused.doc.error).toMatchObject({ code: 'policy_limit', limit: 'perAsk', builtInDefault: true, exitCode: 5 });

    expect(await m.stop()).toBe(0);
    expect(nonProtocolLines(m.stdout())).toEqual([]);
    expect(m.stderr()).toMatch(/spending policy the built-in default, as no policy file is set \(at most 5 USDC per ask/);
  });
});
