// Resolved settings. Precedence for every value: flag, then environment, then the config file, then default.
// Each value remembers where it came from so `loopsign config show` can say so.
import { promises as fs } from 'node:fs';
import * as z from 'zod';
import { UsageError } from './errors.js';
import { defaultConfigFile, defaultKeystorePath, expandHome, loopsignPaths, type LoopsignPaths } from './paths.js';
import type { Env } from './env.js';
import { SUPPORTED_CHAIN_IDS } from './chains/table.js';
import { hideUrlInOutput, redactUrl } from './output.js';
import { DEFAULT_PROFILE_ID } from './protocol/profiles/index.js';
import { jsonProblem } from './json-problem.js';
import { resolveSigner, type ResolvedSigner } from './wallet/signers/spec.js';

export type Source = 'flag' | 'env' | 'config' | 'default' | 'sandbox manifest' | 'env ETH_RPC_URL';

export interface Setting<T> {
  value: T;
  source: Source;
}

/** Global flags as commander parsed them (strings, not yet validated). */
export interface GlobalFlags {
  json?: boolean;
  quiet?: boolean;
  debug?: boolean;
  baseUrl?: string;
  rpcUrl?: string;
  chainId?: string;
  keystore?: string;
  passwordFile?: string;
  passwordEnv?: string;
  allowWeakKdf?: boolean;
  /** A policy file enforced on top of the config folder's policy.json (it can add limits, never lift one). */
  policy?: string;
  /** Which signer holds the key: keystore, aws:…, gcp:…, rpc:…, ledger[:…] (src/wallet/signers/spec.ts). */
  signer?: string;
  /** The address an external signer must hold. */
  from?: string;
}

const address = z.string().regex(/^0x[0-9a-fA-F]{40}$/, 'must be a 0x-prefixed 20-byte hex address');

const chainOverride = z
  .object({
    contracts: z.record(z.string(), address).optional(),
    tokens: z
      .object({
        USDC: z
          .object({ address: address.optional(), eip712: z.object({ name: z.string(), version: z.string() }).optional() })
          .strict()
          .optional(),
        LREP: z.object({ address: address.optional() }).strict().optional(),
      })
      .strict()
      .optional(),
    batchDelegate: address.optional(),
    rpcUrl: z.string().optional(),
    /** The block a slot's fate is final at before its calls may move to a new nonce (docs/security.md). */
    finality: z.enum(['finalized', 'safe']).optional(),
  })
  .strict();

export const configFileSchema = z
  .object({
    baseUrl: z.string().optional(),
    rpcUrl: z.string().optional(),
    chainId: z.union([z.number().int(), z.string()]).optional(),
    keystore: z.string().optional(),
    /** The signer (as --signer) and the address it must hold (as --from). */
    signer: z.string().optional(),
    from: z.string().optional(),
    passwordFile: z.string().optional(),
    passwordEnv: z.string().optional(),
    sandboxManifest: z.string().optional(),
    /** The workspace credential's file (an rlk_ key or rlo_at_ token), used when no --api-key-file/--api-key-env is given. */
    apiKeyFile: z.string().optional(),
    rpcTimeoutMs: z.number().int().positive().optional(),
    maxFeePerGasGwei: z.union([z.number().positive(), z.string()]).optional(),
    /** The service profile (src/protocol/profiles): routes, ask rules, hash layouts and trust anchors of one service version. */
    profile: z.string().optional(),
    chains: z.record(z.string(), chainOverride).optional(),
    /** Opt-in: let `chains["8453"]` replace production trust anchors (a warning is printed on every signing command). */
    allowProductionOverrides: z.boolean().optional(),
    /** Opt-in: accept a plain-http RPC on a host that is not loopback (a private node the user runs). */
    allowInsecureRpc: z.boolean().optional(),
  })
  .strict();

export type ConfigFile = z.infer<typeof configFileSchema>;
export type ChainOverride = z.infer<typeof chainOverride>;

export interface ResolvedConfig {
  configFile: Setting<string>;
  configFileFound: boolean;
  baseUrl: Setting<string | undefined>;
  rpcUrl: Setting<string | undefined>;
  chainId: Setting<number>;
  keystore: Setting<string>;
  passwordFile: Setting<string | undefined>;
  passwordEnv: Setting<string>;
  sandboxManifest: Setting<string | undefined>;
  /** The workspace credential's file when no flag names one (env LOOPSIGN_API_KEY_FILE, config `apiKeyFile`). */
  apiKeyFile: Setting<string | undefined>;
  /** How long one RPC request may take before it counts as failed (a stalled node). */
  rpcTimeoutMs: Setting<number>;
  /** The service profile id (env LOOPSIGN_PROFILE, config `profile`). */
  profile: Setting<string>;
  /** Refuse to sign when the network asks more per gas than this (gwei); unset: the chain's default. */
  maxFeePerGasGwei: Setting<string | undefined>;
  /** --allow-weak-kdf: unlock a keystore whose KDF is below the floor (wallet/keystore.ts). */
  allowWeakKdf: boolean;
  /** Which source signs, and the address it must hold (flags, LOOPSIGN_SIGNER / LOOPSIGN_FROM, config; src/wallet/signers/spec.ts). */
  signer: ResolvedSigner;
  file: ConfigFile;
}

export const DEFAULT_CHAIN_ID = 8453;

export async function loadConfigFile(file: string): Promise<{ found: boolean; data: ConfigFile }> {
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { found: false, data: {} };
    throw new UsageError('config_unreadable', `cannot read config file ${file}: ${(error as Error).message}`);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new UsageError('config_invalid', `config file ${file} is ${jsonProblem(error, text)}`, {
      hint: 'fix the file or remove it; `loopsign config show` prints the resolved values',
    });
  }
  const parsed = configFileSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const where = issue.path.length > 0 ? issue.path.join('.') : '(top level)';
    throw new UsageError('config_invalid', `config file ${file}: ${where}: ${issue.message}`, {
      hint: 'see docs/cli.md for the config file keys',
    });
  }
  return { found: true, data: parsed.data };
}

/** Reads one setting: flag, then the variable `envName` of the run's environment, then the config file, then default. */
type Pick = <T>(flag: T | undefined, envName: string | undefined, fileValue: T | undefined, fallback: T) => Setting<T>;

const picker = (vars: Env): Pick =>
  function pick<T>(flag: T | undefined, envName: string | undefined, fileValue: T | undefined, fallback: T): Setting<T> {
    if (flag !== undefined) return { value: flag, source: 'flag' };
    if (envName !== undefined) {
      const env = vars[envName];
      if (env !== undefined && env !== '') return { value: env as T, source: 'env' };
    }
    if (fileValue !== undefined) return { value: fileValue, source: 'config' };
    return { value: fallback, source: 'default' };
  };

function positiveMs(setting: Setting<string | number>, what: string): Setting<number> {
  const text = String(setting.value).trim();
  if (!/^[1-9][0-9]{0,8}$/.test(text))
    throw new UsageError('invalid_config', `${what} (from ${setting.source}): "${text}" is not a positive number of milliseconds`);
  return { value: Number(text), source: setting.source };
}

/** A fee cap in gwei, kept as its decimal text (exact: parsed to wei where it is used). */
function positiveGwei(setting: Setting<string | number | undefined>): Setting<string | undefined> {
  if (setting.value === undefined) return { value: undefined, source: setting.source };
  const text = typeof setting.value === 'number' ? setting.value.toFixed(9).replace(/\.?0+$/, '') : setting.value.trim();
  const n = Number(text);
  if (!/^[0-9]+(\.[0-9]{1,9})?$/.test(text) || !(n > 0) || n > 100_000) {
    throw new UsageError(
      'invalid_config',
      `max fee per gas (from ${setting.source}): "${text}" is not a positive number of gwei with at most 9 decimals (at most 100000)`,
    );
  }
  return { value: text, source: setting.source };
}

export function parseChainId(raw: unknown, where: string): number {
  const text = String(raw).trim();
  if (!/^\d+$/.test(text)) throw new UsageError('invalid_chain_id', `${where}: chain id "${text}" is not a positive integer`);
  const id = Number(text);
  if (!(SUPPORTED_CHAIN_IDS as readonly number[]).includes(id)) {
    throw new UsageError('unsupported_chain', `${where}: chain id ${id} is not supported`, {
      hint: 'use 8453 (Base, production), 84532 (Base Sepolia, staging) or 31337 (local sandbox)',
    });
  }
  return id;
}

/** localhost, 127.0.0.0/8 or ::1 (URL.hostname form). */
export function isLoopbackHost(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname);
}

export function checkBaseUrl(raw: string, where: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UsageError('invalid_base_url', `${where}: "${raw}" is not a URL`, { hint: 'for example https://www.rateloop.ai' });
  }
  const loopback = isLoopbackHost(url.hostname);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback)) {
    throw new UsageError('insecure_base_url', `${where}: ${raw} must use https (plain http only on a loopback host)`);
  }
  // Credentials in it would be sent to the service as Basic auth (node:http sends a URL's userinfo) and printed with
  // every message naming the URL; the service takes none this way. Refused without echoing them.
  if (url.username || url.password) {
    throw new UsageError('invalid_base_url', `${where}: ${url.protocol}//${url.host} must not carry a user name or password`, {
      hint: 'give the bare origin, e.g. https://www.rateloop.ai; a workspace credential goes in --api-key-file',
    });
  }
  if (url.search || url.hash) throw new UsageError('invalid_base_url', `${where}: ${raw} must not carry a query or fragment`);
  return url.toString().replace(/\/+$/, '');
}

/**
 * An RPC URL: http(s) only; plain http only on a loopback host unless the user opted in (`allowInsecureRpc`), since
 * a remote plain-http RPC can be read and answered by anyone on the path. RPC URLs often carry an API key in their
 * path or userinfo: from here on every output hides all but scheme and host (output.ts).
 */
export function checkRpcUrl(raw: string, where: string, allowInsecure: boolean): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UsageError('invalid_rpc_url', `${where}: the RPC URL is not a URL`, { hint: 'for example https://mainnet.base.org' });
  }
  hideUrlInOutput(raw);
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new UsageError('invalid_rpc_url', `${where}: ${redactUrl(raw)} must use https (or http on a loopback host)`);
  }
  if (url.protocol === 'http:' && !isLoopbackHost(url.hostname) && !allowInsecure) {
    throw new UsageError(
      'insecure_rpc_url',
      `${where}: ${redactUrl(raw)} is plain http on a remote host; use https (plain http only on a loopback host, or set "allowInsecureRpc": true in the config file)`,
    );
  }
  return raw;
}

/** Paths from flags, the environment or the config file: `~` and `~/…` are the home directory (no shell expands them there). */
function pathSetting<T extends string | undefined>(setting: Setting<T>, what: string): Setting<T> {
  return setting.value === undefined
    ? setting
    : { value: expandHome(setting.value, `${what} (from ${setting.source})`) as T, source: setting.source };
}

/** Which production trust anchors (chain 8453) the config file replaces, as dotted keys. */
export function productionOverrideKeys(file: ConfigFile): string[] {
  const o = file.chains?.['8453'];
  if (!o) return [];
  const keys = [
    ...Object.keys(o.contracts ?? {}).map((k) => `contracts.${k}`),
    ...(o.tokens?.USDC?.address ? ['tokens.USDC.address'] : []),
    ...(o.tokens?.USDC?.eip712 ? ['tokens.USDC.eip712'] : []),
    ...(o.tokens?.LREP?.address ? ['tokens.LREP.address'] : []),
    ...(o.batchDelegate ? ['batchDelegate'] : []),
  ];
  return keys.map((k) => `chains.8453.${k}`);
}

/**
 * The settings of a run, from its flags and its environment (the Context's `env`: the process's in the CLI, a test's
 * own in tests) — this is where loopsign's variables are read; `paths` defaults to the XDG folders of that environment.
 */
export async function resolveConfig(flags: GlobalFlags, env: Env, paths: LoopsignPaths = loopsignPaths(env)): Promise<ResolvedConfig> {
  const pick = picker(env);
  // An empty LOOPSIGN_CONFIG names no file (the default's source, but the empty path: none is read), as before.
  const configFile = pathSetting<string>(
    env.LOOPSIGN_CONFIG
      ? { value: env.LOOPSIGN_CONFIG, source: 'env' }
      : { value: env.LOOPSIGN_CONFIG ?? defaultConfigFile(paths), source: 'default' },
    'config file',
  );
  const { found, data } = await loadConfigFile(configFile.value);

  const chainRaw = pick<string | number>(flags.chainId, 'LOOPSIGN_CHAIN_ID', data.chainId, DEFAULT_CHAIN_ID);
  const chainId: Setting<number> = { value: parseChainId(chainRaw.value, `chain id (from ${chainRaw.source})`), source: chainRaw.source };

  const baseUrl = pick<string | undefined>(flags.baseUrl, 'LOOPSIGN_BASE_URL', data.baseUrl, undefined);
  if (baseUrl.value !== undefined) baseUrl.value = checkBaseUrl(baseUrl.value, `base URL (from ${baseUrl.source})`);

  const rpcUrl = pick<string | undefined>(
    flags.rpcUrl,
    'LOOPSIGN_RPC_URL',
    data.rpcUrl ?? data.chains?.[String(chainId.value)]?.rpcUrl,
    undefined,
  );
  if (rpcUrl.value !== undefined) checkRpcUrl(rpcUrl.value, `RPC URL (from ${rpcUrl.source})`, data.allowInsecureRpc === true);
  if (productionOverrideKeys(data).length > 0 && data.allowProductionOverrides !== true) {
    throw new UsageError(
      'production_override_refused',
      `config file ${configFile.value} replaces production (8453) trust anchors (${productionOverrideKeys(data).join(', ')}) without "allowProductionOverrides": true`,
      {
        hint: 'remove chains."8453" from the config file, or add "allowProductionOverrides": true if you really mean to trust other contracts on Base',
      },
    );
  }

  return {
    configFile,
    configFileFound: found,
    baseUrl,
    rpcUrl,
    chainId,
    keystore: pathSetting(pick(flags.keystore, 'LOOPSIGN_KEYSTORE', data.keystore, defaultKeystorePath(paths)), 'keystore path'),
    passwordFile: pathSetting(
      pick<string | undefined>(flags.passwordFile, 'LOOPSIGN_PASSWORD_FILE', data.passwordFile, undefined),
      'password file',
    ),
    passwordEnv: pick(flags.passwordEnv, undefined, data.passwordEnv, 'LOOPSIGN_PASSWORD'),
    sandboxManifest: pathSetting(
      pick<string | undefined>(undefined, 'LOOPSIGN_SANDBOX_MANIFEST', data.sandboxManifest, undefined),
      'sandbox manifest',
    ),
    apiKeyFile: pathSetting(pick<string | undefined>(undefined, 'LOOPSIGN_API_KEY_FILE', data.apiKeyFile, undefined), 'API key file'),
    rpcTimeoutMs: positiveMs(pick<string | number>(undefined, 'LOOPSIGN_RPC_TIMEOUT_MS', data.rpcTimeoutMs, 20_000), 'RPC timeout'),
    profile: pick<string>(undefined, 'LOOPSIGN_PROFILE', data.profile, DEFAULT_PROFILE_ID),
    maxFeePerGasGwei: positiveGwei(pick<string | number | undefined>(undefined, 'LOOPSIGN_MAX_FEE_GWEI', data.maxFeePerGasGwei, undefined)),
    allowWeakKdf: flags.allowWeakKdf === true,
    signer: resolveSigner({
      flags: { signer: flags.signer, from: flags.from, keystore: flags.keystore },
      env,
      file: { signer: data.signer, from: data.from, keystore: data.keystore },
    }),
    file: data,
  };
}
