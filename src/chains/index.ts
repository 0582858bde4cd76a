// Per-chain trust anchors: the built-in table, then operator overrides from the config file, then (31337 only)
// the manifest the running sandbox wrote. Addresses the service returns never enter here.
import path from 'node:path';
import { promises as fs } from 'node:fs';
import { parseGwei } from 'viem';
import * as z from 'zod';
import { UsageError } from '../errors.js';
import { defaultSandboxDir, type LoopsignPaths } from '../paths.js';
import type { Env } from '../env.js';
import { checkRpcUrl, type ResolvedConfig, type Setting } from '../config.js';
import { BUILTIN_CHAINS, type Address, type ChainConfig, type ChainContracts } from './table.js';
import { DEFAULT_PROFILE, getProfile, type ServiceProfile } from '../protocol/profiles/index.js';

export * from './table.js';
export { assertSandboxRunning } from './sandbox-guard.js';
import { assertSandboxRunning } from './sandbox-guard.js';

/**
 * A chain's built-in facts (USDC, drand, delegate) with the service profile's trust anchors for it: its contract
 * addresses and LREP, each value labelled with where it came from.
 */
export function chainForProfile(chainId: number, profile: ServiceProfile = DEFAULT_PROFILE): ChainConfig {
  const builtin = BUILTIN_CHAINS[chainId];
  if (!builtin) throw new UsageError('unsupported_chain', `chain id ${chainId} is not supported`);
  const chain: ChainConfig = structuredClone(builtin);
  chain.profile = profile.id;
  chain.sources = {};
  if (chain.tokens.USDC.address) chain.sources.USDC = 'built-in chain table';
  const deployment = profile.deployments[chainId];
  if (deployment && 'unavailable' in deployment) chain.noDeployment = deployment.unavailable;
  if (deployment && 'contracts' in deployment) {
    chain.contracts = { ...deployment.contracts };
    if (deployment.lrep) chain.tokens.LREP.address = deployment.lrep;
    for (const k of [...Object.keys(deployment.contracts), ...(deployment.lrep ? ['LREP'] : [])])
      chain.sources[k] = `profile ${profile.id}`;
    chain.source = deployment.source;
  }
  return chain;
}

/** The service contracts a paid round (ask, bonus, rating) signs against. */
export const PAID_ROUND_CONTRACTS = [
  'contentRegistry',
  'questionRewardPoolEscrow',
  'x402QuestionSubmitter',
  'feedbackBonusEscrow',
  'roundVotingEngine',
  'advisoryVoteRecorder',
] as const;

/**
 * Refuses early (exit 2) on a chain with no trusted deployment of the service's paid-round contracts, saying what to
 * configure, instead of failing later at the first plan.
 */
export function assertPaidRoundDeployment(chain: ChainConfig): void {
  assertSandboxRunning(chain);
  const missing: string[] = PAID_ROUND_CONTRACTS.filter((k) => !chain.contracts[k]);
  if (!chain.tokens.LREP.address) missing.push('LREP');
  if (missing.length === 0) return;
  const why = chain.noDeployment ?? `no trusted address is configured for ${missing.join(', ')} on chain ${chain.chainId}`;
  throw new UsageError(
    'no_trusted_deployment',
    `chain ${chain.chainId} (${chain.name}): ${why}; loopsign will not sign a paid round there`,
    {
      hint: `configure the deployment you trust in the config file: chains.${chain.chainId}.contracts.{${PAID_ROUND_CONTRACTS.filter((k) => missing.includes(k)).join(', ')}}${missing.includes('LREP') ? ` and chains.${chain.chainId}.tokens.LREP.address` : ''}`,
      details: { missing },
    },
  );
}

const address = z.string().regex(/^0x[0-9a-fA-F]{40}$/);

export const sandboxManifestSchema = z.object({
  schema: z.literal('loopsign.sandbox-manifest.v1'),
  chainId: z.literal(31337),
  baseUrl: z.string(),
  rpcUrl: z.string(),
  contracts: z.record(z.string(), address),
  tokens: z.object({ USDC: z.object({ address }), LREP: z.object({ address }) }),
  batchDelegate: address.optional(),
  drand: z.object({
    name: z.string(),
    chainHash: z.string().regex(/^[0-9a-f]{64}$/),
    genesis: z.number().int(),
    period: z.number().int().positive(),
    publicKey: z.string().regex(/^[0-9a-f]+$/),
    scheme: z.string(),
    url: z.string().optional(),
  }),
  devWallet: z.object({ address, keystore: z.string(), passwordFile: z.string() }).optional(),
  workspace: z.object({ id: z.string(), apiKeyFile: z.string(), sessionCookieFile: z.string().optional() }).optional(),
  pid: z.number().int().optional(),
  /** MetaMask's Delegation Framework as the sandbox deployed it (issue 38): addresses and runtime code hashes. */
  delegation: z
    .object({
      entryPoint: address,
      contracts: z.object({
        delegationManager: address,
        deleGator: address,
        erc20PeriodTransferEnforcer: address,
        multiTokenPeriodEnforcer: address,
        allowedCalldataEnforcer: address,
        timestampEnforcer: address,
        nonceEnforcer: address,
      }),
      codeHashes: z.record(z.string(), z.string().regex(/^0x[0-9a-f]{64}$/)),
    })
    .optional(),
});
export type SandboxManifest = z.infer<typeof sandboxManifestSchema>;

export function sandboxManifestPath(config: ResolvedConfig, paths: LoopsignPaths): string {
  return config.sandboxManifest.value ?? path.join(defaultSandboxDir(paths), 'manifest.json');
}

export async function readSandboxManifest(file: string): Promise<SandboxManifest | undefined> {
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new UsageError('sandbox_manifest_unreadable', `cannot read sandbox manifest ${file}: ${(error as Error).message}`, {
      hint: 'check the path, or start the sandbox with `loopsign sandbox` (it writes its manifest there)',
    });
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new UsageError('sandbox_manifest_invalid', `sandbox manifest ${file} is not valid JSON`);
  }
  const parsed = sandboxManifestSchema.safeParse(raw);
  if (!parsed.success) {
    throw new UsageError('sandbox_manifest_invalid', `sandbox manifest ${file} is not a loopsign sandbox manifest`, {
      hint: 'restart `loopsign sandbox`, which rewrites it',
    });
  }
  return parsed.data;
}

export interface ResolvedChain {
  chain: ChainConfig;
  rpcUrl: Setting<string | undefined>;
  baseUrl: Setting<string | undefined>;
  rpcTimeoutMs: number;
  /** The fee cap in wei per gas, and where it came from. */
  maxFeePerGas: Setting<bigint>;
  manifest?: SandboxManifest;
}

/**
 * The chain the config selects, with overrides and sandbox values applied. `env` is the run's environment
 * (ETH_RPC_URL), `paths` its folders (the sandbox's default manifest). On the sandbox chain (31337) without a manifest
 * the chain is marked (`missingManifest`): a read of a local node the user named still works, but nothing may reach a
 * service or sign a paid round (assertSandboxRunning).
 */
export async function resolveChain(config: ResolvedConfig, env: Env, paths: LoopsignPaths): Promise<ResolvedChain> {
  const id = config.chainId.value;
  const chain = chainForProfile(id, getProfile(config.profile.value, `profile (from ${config.profile.source})`));
  let rpcUrl = config.rpcUrl;
  let baseUrl = config.baseUrl;
  let manifest: SandboxManifest | undefined;

  if (id === 31337) {
    const file = sandboxManifestPath(config, paths);
    manifest = await readSandboxManifest(file);
    if (manifest) {
      chain.contracts = { ...(manifest.contracts as ChainContracts) };
      chain.tokens.USDC.address = manifest.tokens.USDC.address as Address;
      chain.tokens.LREP.address = manifest.tokens.LREP.address as Address;
      for (const k of [...Object.keys(manifest.contracts), 'USDC', 'LREP']) chain.sources![k] = 'sandbox manifest';
      if (manifest.batchDelegate) chain.batchDelegate = manifest.batchDelegate as Address;
      if (manifest.delegation) chain.delegationManager = manifest.delegation.contracts.delegationManager as Address;
      chain.drand = { ...manifest.drand };
      chain.source = `sandbox manifest ${file}`;
      if (rpcUrl.value === undefined) rpcUrl = { value: manifest.rpcUrl, source: 'sandbox manifest' };
      if (baseUrl.value === undefined) baseUrl = { value: manifest.baseUrl, source: 'sandbox manifest' };
    } else {
      chain.missingManifest = file;
      chain.source = `no sandbox manifest at ${file}`;
    }
  }

  const override = config.file.chains?.[String(id)];
  if (override) {
    chain.contracts = { ...chain.contracts, ...(override.contracts as ChainContracts | undefined) };
    for (const k of Object.keys(override.contracts ?? {})) chain.sources![k] = 'config file';
    if (override.tokens?.USDC?.address) chain.tokens.USDC.address = override.tokens.USDC.address as Address;
    if (override.tokens?.USDC?.eip712) chain.tokens.USDC.eip712 = override.tokens.USDC.eip712;
    if (override.tokens?.LREP?.address) chain.tokens.LREP.address = override.tokens.LREP.address as Address;
    if (override.tokens?.USDC?.address) chain.sources!.USDC = 'config file';
    if (override.tokens?.LREP?.address) chain.sources!.LREP = 'config file';
    if (override.batchDelegate) chain.batchDelegate = override.batchDelegate as Address;
    if (override.finality) chain.finality = override.finality;
    chain.source += ` + config overrides`;
  }
  // Foundry's convention, below loopsign's own flag, variable, config key and the sandbox manifest. Its eth_chainId
  // is checked like any RPC's before use, so a node of another chain is refused, naming this source.
  const ethRpcUrl = env.ETH_RPC_URL;
  if (rpcUrl.value === undefined && ethRpcUrl !== undefined && ethRpcUrl !== '') {
    checkRpcUrl(ethRpcUrl, 'RPC URL (from ETH_RPC_URL)', config.file.allowInsecureRpc === true);
    rpcUrl = { value: ethRpcUrl, source: 'env ETH_RPC_URL' };
  }
  if (rpcUrl.value === undefined && chain.defaultRpcUrl) rpcUrl = { value: chain.defaultRpcUrl, source: 'default' };
  const rpcTimeoutMs = config.rpcTimeoutMs.value;
  const gwei = config.maxFeePerGasGwei.value;
  const maxFeePerGas: Setting<bigint> =
    gwei === undefined
      ? { value: parseGwei(String(chain.defaultMaxFeePerGasGwei)), source: 'default' }
      : { value: parseGwei(gwei), source: config.maxFeePerGasGwei.source };
  const out: ResolvedChain = { chain, rpcUrl, baseUrl, rpcTimeoutMs, maxFeePerGas };
  if (manifest) out.manifest = manifest;
  return out;
}
