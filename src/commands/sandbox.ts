// loopsign sandbox: the local stand-in for the service, in the foreground until Ctrl-C / SIGTERM.
import type { Context } from '../context.js';
import { UsageError } from '../errors.js';
import { onShutdown, setResumeHint } from '../shutdown.js';
import type { SandboxFundOptions, SandboxOptions } from './sandbox.def.js';

export async function sandbox(ctx: Context, options: SandboxOptions): Promise<void> {
  let port: number | undefined;
  if (options.port !== undefined) {
    port = Number(options.port);
    if (!Number.isInteger(port) || port < 1 || port > 65535)
      throw new UsageError('invalid_port', `--port ${String(options.port)} is not a TCP port (1-65535)`);
  }
  let blockTime: number | undefined;
  if (options.blockTime !== undefined) {
    blockTime = Number(options.blockTime);
    if (!Number.isInteger(blockTime) || blockTime < 1 || blockTime > 3600)
      throw new UsageError(
        'invalid_block_time',
        `--block-time ${String(options.blockTime)} is not a whole number of seconds from 1 to 3600`,
      );
  }
  if (port !== undefined) await portFree(port);
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
  }).catch((error: unknown) => {
    // Taken between the check above and the service's own listen.
    if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE' && port !== undefined) throw portInUse(port);
    throw error;
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
      '  loopsign sandbox fund 0x…ADDRESS --usdc 100 --eth 1                    # fund another wallet',
      `  loopsign evidence fetch audit --workspace ${m.workspace?.id} --session-cookie-file ${m.workspace?.sessionCookieFile}`,
      `  loopsign review policy --api-key-file ${m.workspace?.apiKeyFile}      # invited review (docs/review.md)`,
    ].join('\n'),
  );
  // It runs until the process is told to stop: the shutdown handler (src/shutdown.ts) runs the hook that stops anvil,
  // the keeper and the server and removes the manifest, then exits 130/143 with its line.
  setResumeHint('the sandbox stopped (anvil too) and removed its manifest; start it again with the same command');
  onShutdown(async () => {
    ctx.out.progress('sandbox.stop', 'stopping the sandbox');
    await sb.stop();
  });
  await new Promise<void>((resolve) => {
    if (ctx.signal?.aborted) resolve();
    ctx.signal?.addEventListener('abort', () => resolve(), { once: true });
  });
  await sb.stop();
}

const portInUse = (port: number) =>
  new UsageError('port_in_use', `--port ${port} is in use on 127.0.0.1 (another sandbox, or another program)`, {
    hint: 'choose another --port, or leave --port out to take a free one',
  });

/** Refuses a --port that something already listens on, before anvil is started. */
async function portFree(port: number): Promise<void> {
  const { createServer } = await import('node:net');
  await new Promise<void>((resolve, reject) => {
    const server = createServer();
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        error.code === 'EADDRINUSE'
          ? portInUse(port)
          : error.code === 'EACCES'
            ? new UsageError('port_not_allowed', `--port ${port} may not be used by this user (ports below 1024 need privileges)`, {
                hint: 'choose a port above 1023, or leave --port out',
              })
            : error,
      ),
    );
    server.listen(port, '127.0.0.1', () => server.close(() => resolve()));
  });
}

/**
 * `sandbox fund ADDRESS`: the sandbox's test control, by its manifest, with amounts in display units (the control
 * route takes atomic units for tokens). Only a running sandbox answers it; the live service has no such route.
 */
export async function sandboxFund(ctx: Context, options: SandboxFundOptions, args: unknown[]): Promise<void> {
  const { checkAddress } = await import('../address.js');
  const { formatUnits, parseDisplayAmount, MAX_TOKEN_AMOUNT } = await import('../amounts.js');
  const address = checkAddress(args[0], 'address');
  // Each asset not named keeps its default: `--usdc 100 --eth 1` still gives the LREP a first `rate` stakes (an asset
  // is left out with 0, e.g. --lrep 0).
  const eth = parseDisplayAmount(options.eth ?? '1', 18, '--eth');
  const usdc = parseDisplayAmount(options.usdc ?? '100', 6, '--usdc');
  const lrep = parseDisplayAmount(options.lrep ?? '100', 6, '--lrep');
  for (const [flag, v, d] of [
    ['--eth', eth, 18],
    ['--usdc', usdc, 6],
    ['--lrep', lrep, 6],
  ] as const) {
    if (v > MAX_TOKEN_AMOUNT * 10n ** BigInt(d))
      throw new UsageError(
        'amount_too_large',
        `${flag} ${formatUnits(v, d)} is more than the sandbox gives at once (${formatUnits(MAX_TOKEN_AMOUNT, 0)})`,
      );
  }
  const config = await ctx.config();
  const { readSandboxManifest, sandboxManifestPath } = await import('../chains/index.js');
  const file = sandboxManifestPath(config, ctx.paths);
  const manifest = await readSandboxManifest(file);
  if (!manifest) {
    throw new UsageError('no_sandbox', `no sandbox manifest at ${file}: no sandbox is running there`, {
      hint: 'start one with `loopsign sandbox --state-dir DIR` and set LOOPSIGN_SANDBOX_MANIFEST=DIR/manifest.json',
    });
  }
  const body = {
    address,
    ...(eth > 0n ? { eth: formatUnits(eth, 18) } : {}),
    ...(usdc > 0n ? { usdc: usdc.toString() } : {}),
    ...(lrep > 0n ? { lrep: lrep.toString() } : {}),
  };
  const { ServiceError } = await import('../errors.js');
  (await import('../wasm-tier.js')).beforeHttp();
  let res: Response;
  try {
    res = await fetch(`${manifest.baseUrl}/__sandbox/fund`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: ctx.signal,
    });
  } catch (error) {
    throw new ServiceError(
      'sandbox_unreachable',
      `the sandbox at ${manifest.baseUrl} (manifest ${file}) did not answer: ${(error as Error).message}`,
      {
        hint: 'is it still running? start it again with `loopsign sandbox`',
      },
    );
  }
  if (!res.ok) throw new ServiceError('sandbox_fund_failed', `the sandbox refused to fund ${address} (HTTP ${res.status})`);
  const funded = { eth: formatUnits(eth, 18), usdc: formatUnits(usdc, 6), lrep: formatUnits(lrep, 6) };
  ctx.out.result(
    { address, funded, atomic: { eth: eth.toString(), usdc: usdc.toString(), lrep: lrep.toString() }, baseUrl: manifest.baseUrl },
    () =>
      [
        `funded ${address} on the sandbox at ${manifest.baseUrl}:`,
        ...(eth > 0n ? [`  ETH   balance set to ${funded.eth}`] : []),
        ...(usdc > 0n ? [`  USDC  +${funded.usdc}`] : []),
        ...(lrep > 0n ? [`  LREP  +${funded.lrep}`] : []),
      ].join('\n'),
  );
}
