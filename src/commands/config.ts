// loopsign config show: every resolved value and where it came from. Secrets are reported only as set/unset.
import type { Context } from '../context.js';
import { formatGwei } from 'viem';
import { resolveChain } from '../chains/index.js';

function masked(name: string): { value: string; source: string } {
  const set = process.env[name] !== undefined && process.env[name] !== '';
  return { value: set ? '[set, masked]' : '[unset]', source: set ? 'env' : 'default' };
}

export async function configShow(ctx: Context): Promise<void> {
  const config = await ctx.config();
  const resolved = await resolveChain(config);
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
    passwordStatus: masked(config.passwordEnv.value),
    privateKeyEnv: masked('LOOPSIGN_PRIVATE_KEY'),
    apiKeyEnv: masked('LOOPSIGN_API_KEY'),
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
  };
  const gate = await ctx.policy();
  const policy = {
    files: gate.policies.map((p) => ({ file: p.file, source: p.source, policy: p.policy })),
    remaining: (await gate.remaining(resolved.chain)).map((w) => ({ ...w, limit: w.limit.toString(), used: w.used.toString(), left: w.left.toString() })),
  };
  ctx.out.result({ settings, chain, policy }, () => {
    const rows = Object.entries(settings).map(([k, s]) => `  ${k.padEnd(13)} ${String(s.value ?? '(none)')}  ${ctx.out.style('dim', `[${s.source}]`)}`);
    const contracts = Object.entries(chain.contracts).map(([k, v]) => `    ${k.padEnd(26)} ${v}`);
    return [
      'settings:',
      ...rows,
      `chain ${chain.chainId} (${chain.name}), table ${chain.tableVersion}, from ${chain.source}:`,
      ...(contracts.length ? contracts : ['    (no service contracts configured)']),
      `    ${'USDC'.padEnd(26)} ${chain.tokens.USDC.address ?? '(not configured)'}`,
      `    ${'LREP'.padEnd(26)} ${chain.tokens.LREP.address ?? '(not configured)'}`,
      `    ${'drand'.padEnd(26)} ${chain.drand.name} ${chain.drand.chainHash}`,
      `    ${'batch delegate'.padEnd(26)} ${chain.batchDelegate ?? '(none pinned)'}`,
      policy.files.length ? `spending policy: ${policy.files.map((f) => `${f.file} [${f.source}]`).join(', ')}` : 'spending policy: none (see docs/policy.md)',
      ...policy.remaining.map((w) => `    ${`${w.window}, ${w.asset}`.padEnd(26)} ${Number(w.left) / 1e6} of ${Number(w.limit) / 1e6} left`),
    ].join('\n');
  });
}
