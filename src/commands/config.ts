// loopsign config show: every resolved value and where it came from. Secrets are reported only as set/unset.
import type { Context } from '../context.js';
import type { Env } from '../env.js';
import { formatGwei } from 'viem';
import { resolveChain } from '../chains/index.js';
import type { ChainConfig } from '../chains/table.js';
import type { PolicyGate } from '../policy/gate.js';
import { describeSource } from '../wallet/signers/types.js';

/** Whether the run's environment `env` sets the variable `name`; its value is never read out. */
function masked(env: Env, name: string): { value: string; source: string } {
  const set = env[name] !== undefined && env[name] !== '';
  return { value: set ? '[set, masked]' : '[unset]', source: set ? 'env' : 'default' };
}

/** The policy files in force and what each window has left: `config show` and the MCP policy tool print this. */
export async function policyView(gate: PolicyGate, chain: ChainConfig) {
  return {
    files: gate.policies.map((p) => ({ file: p.file, source: p.source, policy: p.policy })),
    remaining: (await gate.remaining(chain)).map((w) => ({
      ...w,
      limit: w.limit.toString(),
      used: w.used.toString(),
      left: w.left.toString(),
    })),
  };
}

export async function configShow(ctx: Context): Promise<void> {
  const config = await ctx.config();
  const resolved = await resolveChain(config, ctx.env, ctx.paths);
  const settings = {
    configFile: { value: config.configFile.value, source: config.configFile.source, found: config.configFileFound },
    chainId: config.chainId,
    baseUrl: resolved.baseUrl,
    rpcUrl: resolved.rpcUrl,
    rpcTimeoutMs: config.rpcTimeoutMs,
    maxFeePerGasGwei: { value: formatGwei(resolved.maxFeePerGas.value), source: resolved.maxFeePerGas.source },
    keystore: config.keystore,
    passwordFile: config.passwordFile,
    passwordEnv: config.passwordEnv,
    passwordStatus: masked(ctx.env, config.passwordEnv.value),
    apiKeyFile: config.apiKeyFile,
    privateKeyEnv: masked(ctx.env, 'LOOPSIGN_PRIVATE_KEY'),
    signer: { value: describeSource(config.signer.source), source: config.signer.origin, from: config.signer.from ?? null },
    profile: config.profile,
  };
  const chain = {
    chainId: resolved.chain.chainId,
    name: resolved.chain.name,
    role: resolved.chain.role,
    tableVersion: resolved.chain.tableVersion,
    source: resolved.chain.source,
    contracts: resolved.chain.contracts,
    tokens: resolved.chain.tokens,
    drand: { name: resolved.chain.drand.name, chainHash: resolved.chain.drand.chainHash },
    batchDelegate: resolved.chain.batchDelegate ?? null,
    profile: resolved.chain.profile ?? null,
    /** Where each contract and token address came from: the profile, the config file or the sandbox manifest. */
    sources: resolved.chain.sources ?? {},
    noDeployment: resolved.chain.noDeployment ?? null,
  };
  const { getProfile } = await import('../protocol/profiles/index.js');
  const p = getProfile(config.profile.value);
  const profile = {
    id: p.id,
    summary: p.summary,
    basis: p.basis,
    source: config.profile.source,
    routes: { asks: p.routes.asks, publicMcp: p.routes.publicMcp },
  };
  const policy = await policyView(await ctx.policy(), resolved.chain);
  ctx.out.result({ settings, profile, chain, policy }, () => {
    const rows = Object.entries(settings).map(
      ([k, s]) => `  ${k.padEnd(13)} ${String(s.value ?? '(none)')}  ${ctx.out.style('dim', `[${s.source}]`)}`,
    );
    const from = (k: string) => (chain.sources[k] ? `  ${ctx.out.style('dim', `[${chain.sources[k]}]`)}` : '');
    const contracts = Object.entries(chain.contracts).map(([k, v]) => `    ${k.padEnd(26)} ${v}${from(k)}`);
    return [
      'settings:',
      ...rows,
      `service profile ${profile.id} [${profile.source}]: ${profile.summary}`,
      `chain ${chain.chainId} (${chain.name}), table ${chain.tableVersion}, from ${chain.source}:`,
      ...(contracts.length ? contracts : [`    (no service contracts configured${chain.noDeployment ? `: ${chain.noDeployment}` : ''})`]),
      `    ${'USDC'.padEnd(26)} ${chain.tokens.USDC.address ?? '(not configured)'}${from('USDC')}`,
      `    ${'LREP'.padEnd(26)} ${chain.tokens.LREP.address ?? '(not configured)'}${from('LREP')}`,
      `    ${'drand'.padEnd(26)} ${chain.drand.name} ${chain.drand.chainHash}`,
      `    ${'batch delegate'.padEnd(26)} ${chain.batchDelegate ?? '(none pinned)'}`,
      policy.files.length
        ? `spending policy: ${policy.files.map((f) => `${f.file} [${f.source}]`).join(', ')}`
        : 'spending policy: none (see docs/policy.md)',
      ...policy.remaining.map(
        (w) => `    ${`${w.window}, ${w.asset}`.padEnd(26)} ${Number(w.left) / 1e6} of ${Number(w.limit) / 1e6} left`,
      ),
    ].join('\n');
  });
}
