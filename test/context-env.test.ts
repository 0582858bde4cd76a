// The Context's environment is the one the core reads (src/env.ts): a context built with an explicit env is honoured
// while this worker's process.env holds other values for the same variables — the signer's raw key, the policy file,
// the folders, the RPC. Had any of them been read from the process, the process's value (a different key, a policy
// file that does not exist, another home) would show here.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createContext } from '../src/context.js';
import { Output } from '../src/output.js';

const KEY_IN_CONTEXT = '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d';
const KEY_IN_PROCESS = '0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a';
const home = mkdtempSync(path.join(tmpdir(), 'loopsign-context-env-'));
const other = mkdtempSync(path.join(tmpdir(), 'loopsign-process-env-'));
const policyFile = path.join(home, 'agent-policy.json');
writeFileSync(policyFile, JSON.stringify({ version: 1, perAsk: { maxUsdc: '3000000' } }));

const env = {
  XDG_CONFIG_HOME: path.join(home, 'config'),
  XDG_DATA_HOME: path.join(home, 'data'),
  XDG_STATE_HOME: path.join(home, 'state'),
  LOOPSIGN_PRIVATE_KEY: KEY_IN_CONTEXT,
  LOOPSIGN_POLICY: policyFile,
  ETH_RPC_URL: 'https://rpc-from-context.example',
};
// What this worker's own environment says for the same variables while the contexts run.
const processValues: Record<string, string> = {
  XDG_CONFIG_HOME: path.join(other, 'config'),
  XDG_DATA_HOME: path.join(other, 'data'),
  XDG_STATE_HOME: path.join(other, 'state'),
  LOOPSIGN_PRIVATE_KEY: KEY_IN_PROCESS,
  LOOPSIGN_POLICY: path.join(other, 'no-such-policy.json'),
  ETH_RPC_URL: 'https://rpc-from-process.example',
  LOOPSIGN_CHAIN_ID: '84532',
};
const saved: Record<string, string | undefined> = {};

beforeAll(() => {
  for (const [k, v] of Object.entries(processValues)) {
    saved[k] = process.env[k];
    process.env[k] = v;
  }
});
afterAll(() => {
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
});

function context() {
  const sink = { write: () => true } as unknown as NodeJS.WritableStream;
  return createContext({
    flags: { json: true },
    out: new Output({ json: true, quiet: true, debug: false }, { stdout: sink, stderr: sink }),
    env,
  });
}

describe("a Context's env", () => {
  it('names the signer: the raw key of the context, not the one in process.env', async () => {
    const ctx = context();
    expect(await ctx.walletAddress()).toBe(privateKeyToAccount(KEY_IN_CONTEXT).address);
    const wallet = await ctx.wallet();
    expect((await wallet.account).address).toBe(privateKeyToAccount(KEY_IN_CONTEXT).address);
  });

  it('names the policy file, the folders, the chain and its RPC', async () => {
    const ctx = context();
    expect(ctx.paths.config).toBe(path.join(home, 'config', 'loopsign'));
    const config = await ctx.config();
    expect(config.chainId).toEqual({ value: 8453, source: 'default' });
    expect(config.keystore.value).toBe(path.join(home, 'data', 'loopsign', 'keystore.json'));
    expect((await ctx.chainSettings()).rpcUrl).toEqual({ value: 'https://rpc-from-context.example', source: 'env ETH_RPC_URL' });
    const gate = await ctx.policy();
    expect(gate.policies.map((p) => [p.file, p.source])).toEqual([[policyFile, 'env']]);
  });
});

describe('mcp config', () => {
  // The host starts the server with the env written here and nothing of this shell's: had the folders been left
  // out, the server would read another config folder's policy.json (or none: the built-in default) and keep its
  // spending in another database than the CLI's, whose limits and claims it would then not see.
  it("writes the run's XDG folders (absolute), so that the host's server shares this run's policy folder and database", async () => {
    let text = '';
    const sink = { write: (chunk: string) => ((text += chunk), true) } as unknown as NodeJS.WritableStream;
    const quiet = { write: () => true } as unknown as NodeJS.WritableStream;
    const ctx = createContext({
      flags: { json: true },
      out: new Output({ json: true, quiet: true, debug: false }, { stdout: sink, stderr: quiet }),
      env: { ...env, XDG_STATE_HOME: 'relative-state', XDG_DATA_HOME: '' },
    });
    const { mcpConfig } = await import('../src/commands/mcp.js');
    await mcpConfig(ctx, { host: 'claude' });
    const written = JSON.parse(text).config.mcpServers.loopsign.env;
    expect(written.XDG_CONFIG_HOME).toBe(env.XDG_CONFIG_HOME);
    expect(written.XDG_STATE_HOME).toBe(path.resolve('relative-state'));
    // An empty variable names no folder (the default's): nothing to carry over.
    expect(written).not.toHaveProperty('XDG_DATA_HOME');
    expect(written.LOOPSIGN_POLICY).toBe(policyFile);
  });
});
