// What every command handler and every core flow receives: the output channel and each effect the run may need —
// configuration, spending policy, database, chain, service, wallet, clock, paths — each created lazily, at most once
// per run, from one options object. Tests replace any of them (a fixed clock, a client on a shared anvil, a service
// answering in-process, a wallet of their own); the core never reads the environment or builds a client itself: the
// environment is a value here too (`env`), taken from the process by the CLI and given by tests.
// Nothing here is imported before it is used: `--help` and `--version` load none of it (bench/cold-start.mjs).
import type { PublicClient } from 'viem';
import type { Output } from './output.js';
import type { GlobalFlags, ResolvedConfig } from './config.js';
import type { Approver, PolicyGate } from './policy/gate.js';
import type { Store } from './store/db.js';
import type { ResolvedChain } from './chains/index.js';
import type { ServiceClient } from './service/client.js';
import type { McpClient } from './service/mcp.js';
import type { Wallet } from './wallet/signers/types.js';
import type { ResolvedSigner } from './wallet/signers/spec.js';
import { loopsignPaths, type LoopsignPaths } from './paths.js';
import { ANY_FILE, type FileGate } from './files.js';
import type { Env } from './env.js';

/** Time, as the flows read it: milliseconds since the epoch. */
export interface Clock {
  now(): number;
}

/** The configured chain's settings and a client whose eth_chainId was checked against them. */
export interface CheckedChain {
  settings: ResolvedChain;
  client: PublicClient;
}

export interface Context {
  out: Output;
  flags: GlobalFlags;
  /** The run's environment variables (the process's in the CLI and its MCP server; a test's own in tests). */
  env: Env;
  config(): Promise<ResolvedConfig>;
  /** The spending policy that applies to this run. */
  policy(): Promise<PolicyGate>;
  /** loopsign's database (journals, spend ledgers, policy usage). */
  store(): Promise<Store>;
  /** The configured chain's settings: contracts, tokens, drand, service origin (no network). */
  chainSettings(): Promise<ResolvedChain>;
  /** The configured chain, connected: the RPC's chain id checked first. */
  chain(): Promise<CheckedChain>;
  /** The service client; `spends` requires an explicit service origin (a read may fall back to the public one). */
  service(options?: { spends?: boolean }): Promise<ServiceClient>;
  /** The service's public MCP endpoint (rating, images), at the configured origin. The caller closes it. */
  mcp(): Promise<McpClient>;
  /** The wallet of the configured signer (keystore, KMS, remote, hardware): its address at once, its account to sign. */
  wallet(): Promise<Wallet>;
  /** The wallet's address without unlocking anything (lookups by clientRequestId). */
  walletAddress(): Promise<`0x${string}`>;
  clock: Clock;
  paths: LoopsignPaths;
  /** Cancels the run's waits (an MCP request's signal, or the CLI's on SIGINT/SIGTERM). */
  signal?: AbortSignal;
  /**
   * Puts a yes-or-no question to the person at the MCP host (elicitation), which the agent cannot answer; absent
   * in the CLI, which asks on its terminal, and under an MCP client that cannot elicit.
   */
  askPerson?: AskPerson;
  /** Which files this run may read for its caller (every file the user names, in the CLI; an MCP server's roots). */
  files: FileGate;
}

/** A question only the person may answer: a title and the whole text to decide on. */
export type AskPerson = (question: { title: string; message: string }) => Promise<boolean>;

type Lazy<T> = () => Promise<T>;

export interface ContextOptions {
  flags: GlobalFlags;
  out: Output;
  /** Where every variable is read: the CLI passes its process's environment, once; a test passes its own. */
  env: Env;
  /**
   * Asks a human to approve a spend above the policy's threshold: the MCP server passes one that uses elicitation;
   * the CLI asks on a terminal, and nowhere else.
   */
  approver?: Approver;
  signal?: AbortSignal;
  askPerson?: AskPerson;
  files?: FileGate;
  // Replacements for the effects (tests; the MCP server's fixed signer). Each is still called at most once.
  config?: Lazy<ResolvedConfig>;
  policy?: Lazy<PolicyGate>;
  store?: Lazy<Store>;
  chainSettings?: Lazy<ResolvedChain>;
  chain?: Lazy<CheckedChain>;
  service?: (options: { spends: boolean }) => Promise<ServiceClient>;
  mcp?: () => Promise<McpClient>;
  wallet?: Lazy<Wallet>;
  walletAddress?: Lazy<`0x${string}`>;
  /** The signer to open instead of the configuration's (an MCP server fixes it when it starts). */
  signer?: ResolvedSigner;
  clock?: Clock;
  paths?: LoopsignPaths;
}

const SYSTEM_CLOCK: Clock = { now: () => Date.now() };

/** Memoises a lazy effect: created on first use, the same promise after. */
function once<T>(make: Lazy<T>): Lazy<T> {
  let made: Promise<T> | undefined;
  return () => (made ??= make());
}

export function createContext(o: ContextOptions): Context {
  const { flags, out, env } = o;
  let resolvedPaths: LoopsignPaths | undefined;
  // The XDG folders of this run's environment, read when first asked for.
  const paths = (): LoopsignPaths => (resolvedPaths ??= o.paths ?? loopsignPaths(env));
  const config = once(o.config ?? (() => import('./config.js').then((m) => m.resolveConfig(flags, env, paths()))));
  const store = once(o.store ?? (() => import('./store/open.js').then((m) => m.openStateStore(out, paths()))));
  const chainSettings = once(
    o.chainSettings ?? (async () => (await import('./chains/index.js')).resolveChain(await config(), env, paths())),
  );
  const chain = once(
    o.chain ??
      (async () => {
        const settings = await chainSettings();
        return { settings, client: await (await import('./chains/client.js')).connectChain(settings) };
      }),
  );
  const services = new Map<boolean, Promise<ServiceClient>>();
  const service = (options: { spends?: boolean } = {}) => {
    const spends = options.spends === true;
    let made = services.get(spends);
    if (!made) {
      made = o.service
        ? o.service({ spends })
        : (async () => (await import('./service/client.js')).serviceClient(await config(), await chainSettings(), out, spends))();
      services.set(spends, made);
    }
    return made;
  };
  const mcp =
    o.mcp ??
    (async () => {
      const [{ McpClient }, { DEFAULT_BASE_URL }, { assertSandboxRunning }] = await Promise.all([
        import('./service/mcp.js'),
        import('./service/client.js'),
        import('./chains/sandbox-guard.js'),
      ]);
      const settings = await chainSettings();
      assertSandboxRunning(settings.chain);
      return new McpClient(settings.baseUrl.value ?? DEFAULT_BASE_URL);
    });
  const wallet = once(
    o.wallet ??
      (async () => {
        const { openConfiguredWallet } = await import('./wallet/signers/configured.js');
        return openConfiguredWallet(await config(), await chainSettings(), out, env, o.signer);
      }),
  );
  const walletAddress = once(
    o.walletAddress ??
      (async () => {
        const { configuredAddress } = await import('./wallet/signers/configured.js');
        return configuredAddress(await config(), out, env, o.signer);
      }),
  );
  const policy = once(
    o.policy ??
      (async () => {
        const [g, p] = await Promise.all([import('./policy/gate.js'), import('./policy/prompt.js')]);
        return g.PolicyGate.load(out, { flag: flags.policy, env, paths: paths() }, store, o.approver ?? p.terminalApprover(out));
      }),
  );
  return {
    out,
    flags,
    env,
    signal: o.signal,
    askPerson: o.askPerson,
    files: o.files ?? ANY_FILE,
    config,
    policy,
    store,
    chainSettings,
    chain,
    service,
    mcp,
    wallet,
    walletAddress,
    clock: o.clock ?? SYSTEM_CLOCK,
    get paths(): LoopsignPaths {
      return paths();
    },
  };
}
