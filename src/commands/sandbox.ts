// loopsign sandbox: the local stand-in for the service, in the foreground until Ctrl-C / SIGTERM.
import type { Context } from '../context.js';
import { UsageError } from '../errors.js';
import type { SandboxOptions } from './sandbox.def.js';

export async function sandbox(ctx: Context, options: SandboxOptions): Promise<void> {
  let port: number | undefined;
  if (options.port !== undefined) {
    port = Number(options.port);
    if (!Number.isInteger(port) || port < 1 || port > 65535) throw new UsageError('invalid_port', `--port ${String(options.port)} is not a TCP port (1-65535)`);
  }
  let blockTime: number | undefined;
  if (options.blockTime !== undefined) {
    blockTime = Number(options.blockTime);
    if (!Number.isInteger(blockTime) || blockTime < 1 || blockTime > 3600) throw new UsageError('invalid_block_time', `--block-time ${String(options.blockTime)} is not a whole number of seconds from 1 to 3600`);
  }
  const { startSandbox } = await import('../sandbox/index.js');
  const t0 = Date.now();
  const spinner = await ctx.out.spinner('sandbox.start', 'starting anvil, deploying contracts, funding wallets');
  const sb = await startSandbox({
    port,
    stateDir: typeof options.stateDir === 'string' ? options.stateDir : undefined,
    autoAdvance: options.autoAdvance === true,
    atomicPlans: options.atomicPlans === true,
    blockTime,
    log: (m) => ctx.out.warn(m),
  });
  spinner.succeed(`sandbox ready in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  const m = sb.manifest;
  const info = {
    baseUrl: m.baseUrl,
    rpcUrl: m.rpcUrl,
    chainId: m.chainId,
    blockTime: blockTime ?? null,
    manifest: sb.manifestPath,
    devWallet: m.devWallet,
    workspace: m.workspace,
    contracts: m.contracts,
    tokens: m.tokens,
    batchDelegate: m.batchDelegate,
    drand: { chainHash: m.drand.chainHash, url: m.drand.url, genesis: m.drand.genesis, period: m.drand.period },
    pids: sb.pids,
    startupMs: Date.now() - t0,
  };
  ctx.out.result(info, () =>
    [
      `loopsign sandbox is running (chain 31337, ${blockTime ? `a block every ${blockTime} s` : 'a block per transaction'}). Ctrl-C stops it.`,
      `  base URL     ${m.baseUrl}`,
      `  RPC URL      ${m.rpcUrl}`,
      `  manifest     ${sb.manifestPath}`,
      `  dev wallet   ${m.devWallet?.address} (keystore ${m.devWallet?.keystore}, password in ${m.devWallet?.passwordFile})`,
      `  drand        ${m.drand.chainHash} at ${m.drand.url}`,
      `  workspace    ${m.workspace?.id} (API key in ${m.workspace?.apiKeyFile}, owner's session cookie in ${m.workspace?.sessionCookieFile})`,
      `  USDC         ${m.tokens.USDC.address}`,
      `  LREP         ${m.tokens.LREP.address}`,
      ...Object.entries(m.contracts).map(([k, v]) => `  ${k.padEnd(12).slice(0, 24)} ${v}`),
      `  7702 delegate ${m.batchDelegate}`,
      '',
      'Use it from another shell:',
      `  export LOOPSIGN_CHAIN_ID=31337 LOOPSIGN_SANDBOX_MANIFEST=${sb.manifestPath}`,
      `  export LOOPSIGN_KEYSTORE=${m.devWallet?.keystore} LOOPSIGN_PASSWORD_FILE=${m.devWallet?.passwordFile}`,
      '  loopsign wallet balance',
      `  loopsign evidence fetch audit --workspace ${m.workspace?.id} --session-cookie-file ${m.workspace?.sessionCookieFile}`,
      `  loopsign review policy --api-key-file ${m.workspace?.apiKeyFile}      # invited review (docs/review.md)`,
    ].join('\n'),
  );
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  ctx.out.progress('sandbox.stop', 'stopping the sandbox');
  await sb.stop();
}
