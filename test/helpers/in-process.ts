// The money flows in this process (issue 21): the sandbox started in-process (its anvil, contracts and service on
// loopback), and loopsign's core functions called directly with a Context whose effects are the test's own — a
// store in a temporary folder, a wallet from a fresh funded key, a fixed clock, and any chain client or service the
// test wants instead. No binary, no subprocess of loopsign. Its environment is a value too (`env`: the XDG folders
// of its temporary home and the sandbox's manifest), given to every context: this worker's process.env is not
// touched, and no setting of the developer's shell reaches the configuration.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import type { LocalAccount } from 'viem';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.js';
import { createContext, type Clock, type Context, type ContextOptions } from '../../src/context.js';
import { resolveConfig } from '../../src/config.js';
import type { Env } from '../../src/env.js';
import { loopsignPaths, type LoopsignPaths } from '../../src/paths.js';
import { Store } from '../../src/store/db.js';
import { Output } from '../../src/output.js';
import type { Wallet } from '../../src/wallet/signers/types.js';

export interface InProcess {
  sb: RunningSandbox;
  /** The environment every context of this harness reads (a value: process.env is left alone). */
  env: Env;
  /** The loopsign folders of that environment. */
  paths: LoopsignPaths;
  /** POST (or GET without a body) to the sandbox's test controls. */
  control(pathname: string, body?: unknown, method?: string): Promise<any>;
  /** A fresh key, funded on the sandbox chain. */
  fundedAccount(amounts?: { usdc?: string; lrep?: string; eth?: string }): Promise<LocalAccount>;
  /** A Context for `account`: its own store (or a shared one), a fixed clock, and the overrides given. */
  context(account: LocalAccount, overrides?: Partial<ContextOptions> & { store?: () => Promise<Store> }): Context;
  /** What progress and warnings a context wrote (JSON lines on its stderr). */
  events(ctx: Context): string[];
  stop(): Promise<void>;
}

const quietOut = () => {
  const lines: string[] = [];
  const sink = { write: (s: string) => (lines.push(...s.split('\n').filter(Boolean)), true) } as unknown as NodeJS.WritableStream;
  return { out: new Output({ json: true, quiet: false, debug: false }, { stdout: sink, stderr: sink }), lines };
};

export function walletOf(account: LocalAccount): Wallet {
  return {
    address: account.address,
    source: { kind: 'env' },
    account: Promise.resolve(account),
    capabilities: { transaction: true, typedData: true, message: true, authorization: true },
    close: async () => undefined,
  };
}

export async function startInProcess(options: { raters?: boolean } = {}): Promise<InProcess> {
  const home = mkdtempSync(path.join(tmpdir(), 'loopsign-inproc-'));
  const sb = await startSandbox({ stateDir: path.join(home, 'sandbox'), raters: options.raters });
  // The whole environment of these contexts: nothing of this worker's own (the developer's shell) reaches them.
  const env: Env = {
    XDG_CONFIG_HOME: path.join(home, 'config'),
    XDG_DATA_HOME: path.join(home, 'data'),
    XDG_STATE_HOME: path.join(home, 'state'),
    LOOPSIGN_SANDBOX_MANIFEST: sb.manifestPath,
  };
  const paths = loopsignPaths(env);
  const config = await resolveConfig({ chainId: '31337' }, env, paths);
  const control = async (pathname: string, body?: unknown, method?: string) => {
    const res = await fetch(`${sb.manifest.baseUrl}${pathname}`, {
      method: method ?? (body === undefined ? 'GET' : 'POST'),
      headers: { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return res.json();
  };
  const outs = new WeakMap<Context, string[]>();
  // A fixed clock: the flows read time from the Context, never from the machine (chain time is the chain's).
  const start = Date.now();
  const clock: Clock = { now: () => start };
  return {
    sb,
    env,
    paths,
    control,
    async fundedAccount(amounts = {}) {
      const account = privateKeyToAccount(generatePrivateKey());
      await control('/__sandbox/fund', {
        address: account.address,
        usdc: amounts.usdc ?? '50000000',
        lrep: amounts.lrep ?? '50000000',
        eth: amounts.eth ?? '10',
      });
      return account;
    },
    context(account, overrides = {}) {
      const { out, lines } = quietOut();
      const storeDir = mkdtempSync(path.join(home, 'store-'));
      const ctx = createContext({
        flags: { chainId: '31337', json: true },
        out,
        env,
        paths,
        config: async () => config,
        store: overrides.store ?? (() => Store.open(storeDir)),
        wallet: async () => walletOf(account),
        walletAddress: async () => account.address,
        clock,
        ...overrides,
      });
      outs.set(ctx, lines);
      return ctx;
    },
    events: (ctx) => outs.get(ctx) ?? [],
    stop: () => sb.stop(),
  };
}
