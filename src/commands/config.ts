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

/**
 * The service the commands call, which `baseUrl` alone does not say: with none configured, read-only commands call
 * the production service (spending ones refuse); on the sandbox chain the manifest's, and none without one.
 */
async function serviceUrl(resolved: Awaited<ReturnType<typeof resolveChain>>): Promise<{ value: string | null; source: string }> {
  if (resolved.chain.missingManifest !== undefined)
    return { value: null, source: `none: no sandbox manifest at ${resolved.chain.missingManifest}; nothing is sent` };
  if (resolved.baseUrl.value !== undefined) return { value: resolved.baseUrl.value, source: resolved.baseUrl.source };
  const { DEFAULT_BASE_URL } = await import('../service/client.js');
  return { value: DEFAULT_BASE_URL, source: 'default, for read-only commands; spending ones need --base-url' };
}

/** Whether a password is at hand, never what it is: a file named, the variable set, or neither. */
function passwordStatus(ctx: Context, config: Awaited<ReturnType<Context['config']>>): { value: string; source: string } {
  if (config.passwordFile.value !== undefined) return { value: '[in a file, not read here]', source: config.passwordFile.source };
  return masked(ctx.env, config.passwordEnv.value);
}

/** Where an unlock takes the password from, in the order src/wallet/password.ts tries them. */
function passwordSource(ctx: Context, config: Awaited<ReturnType<Context['config']>>): { value: string; source: string } {
  const file = config.passwordFile;
  if (file.value !== undefined)
    return {
      value: `file ${file.value}`,
      source: file.source === 'env' ? 'env LOOPSIGN_PASSWORD_FILE' : file.source === 'flag' ? 'flag --password-file' : file.source,
    };
  const name = config.passwordEnv.value;
  if (ctx.env[name] !== undefined && ctx.env[name] !== '')
    return { value: `environment variable ${name}`, source: config.passwordEnv.source };
  if (process.stdin.isTTY === true && process.stderr.isTTY === true) return { value: 'a prompt on this terminal', source: 'default' };
  return { value: `none: no password file, ${name} unset, no terminal to prompt on`, source: 'default' };
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

/**
 * The configured wallet's address as far as it is known without a password, a prompt or a device: --from, the
 * private key's, or the keystore file's address field. `config show` never unlocks anything for a warning.
 */
async function addressWithoutUnlocking(ctx: Context): Promise<string | null> {
  const config = await ctx.config();
  const { source, from } = config.signer;
  if (from) return from;
  const keystore = await import('../wallet/keystore.js');
  if (source.kind === 'env') return keystore.addressOfPrivateKey(keystore.parsePrivateKey(ctx.env.LOOPSIGN_PRIVATE_KEY ?? ''));
  if (source.kind !== 'keystore') return null;
  const { readKeystoreFile } = await import('../wallet/unlock.js');
  return keystore.claimedAddress(await readKeystoreFile(config.keystore.value)) ?? null;
}

/**
 * The grants imported for this wallet on this chain (recorded by `budget import`; nothing read from the chain) and
 * where the local policy is looser than one of them. A wallet that cannot be named (no keystore) has none.
 */
async function budgetView(ctx: Context, gate: PolicyGate, chainId: number) {
  const wallet = await addressWithoutUnlocking(ctx).catch(() => null);
  if (wallet === null) return { wallet: null, grants: [], warnings: [] };
  const [{ recordedGrants, grantsOfSession }, { policyLooserThanGrants }] = await Promise.all([
    import('../budget/records.js'),
    import('../budget/policy-compare.js'),
  ]);
  const mine = grantsOfSession(await recordedGrants(ctx.paths.state, { chainId, skipInvalid: true }), wallet, chainId);
  return {
    wallet,
    grants: mine.map(({ grant: g }) => ({
      grant: g.delegations[0]!.hash,
      owner: g.owner,
      perDay: g.delegations[0]!.limits.perDay,
      per30Days: g.delegations[0]!.limits.per30Days,
      expiresAt: g.delegations[0]!.limits.expiresAt,
    })),
    warnings: policyLooserThanGrants(gate.policies, chainId, mine),
  };
}

export async function configShow(ctx: Context): Promise<void> {
  const config = await ctx.config();
  const resolved = await resolveChain(config, ctx.env, ctx.paths);
  const settings = {
    configFile: { value: config.configFile.value, source: config.configFile.source, found: config.configFileFound },
    chainId: config.chainId,
    baseUrl: resolved.baseUrl,
    serviceUrl: await serviceUrl(resolved),
    rpcUrl: resolved.rpcUrl,
    rpcTimeoutMs: config.rpcTimeoutMs,
    maxFeePerGasGwei: { value: formatGwei(resolved.maxFeePerGas.value), source: resolved.maxFeePerGas.source },
    keystore: config.keystore,
    passwordFile: config.passwordFile,
    passwordEnv: config.passwordEnv,
    passwordStatus: passwordStatus(ctx, config),
    passwordSource: passwordSource(ctx, config),
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
  const gate = await ctx.policy();
  const policy = await policyView(gate, resolved.chain);
  const budget = await budgetView(ctx, gate, resolved.chain.chainId);
  ctx.out.result({ settings, profile, chain, policy, budget }, () => {
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
      ...(budget.grants.length
        ? [
            `on-chain budget of ${budget.wallet}: ${budget.grants.map((g) => `grant ${g.grant} from ${g.owner}, ${Number(g.perDay) / 1e6} USDC per UTC day, ${Number(g.per30Days) / 1e6} per 30 days`).join('; ')}`,
          ]
        : []),
      ...budget.warnings.map((w) => `${ctx.out.style('yellow', 'warning:')} ${w.message}`),
    ].join('\n');
  });
}
