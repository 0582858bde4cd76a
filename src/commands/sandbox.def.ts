// loopsign sandbox: definition (handler in sandbox.ts).
import type { Command } from 'commander';
import { examples, type Lazy } from './define.js';

export interface SandboxOptions {
  port?: string;
  stateDir?: string;
  autoAdvance?: boolean;
  atomicPlans?: boolean;
  blockTime?: string;
}

export interface SandboxFundOptions {
  eth?: string;
  usdc?: string;
  lrep?: string;
}

export function defineSandbox(program: Command, lazy: Lazy): void {
  const sandbox = program
    .command('sandbox')
    .description('run a local stand-in for the service (anvil chain, contracts, drand beacon, keeper) on 127.0.0.1')
    .option('--port <n>', 'port for the service (default: a free port)')
    .option('--state-dir <dir>', 'where the manifest and the dev wallet live (default under the XDG state dir)')
    .option('--auto-advance', 'make chain time jump ahead whenever a round only waits for time (rounds settle in seconds)')
    .option('--atomic-plans', 'mark ask and bonus plans requiresAtomicExecution: true')
    .option(
      '--block-time <seconds>',
      'mine a block every N seconds, as a live chain does (Base: 2), once deployed and funded (default: a block per transaction, at once)',
    )
    .addHelpText(
      'after',
      examples(['loopsign sandbox', 'loopsign --json sandbox --port 8787 --auto-advance', 'loopsign sandbox --block-time 2']) +
        '\nTest controls (not part of the live service) are served under /__sandbox on the same port; see docs/sandbox.md.\n',
    )
    .action(
      lazy(
        () => import('./sandbox.js'),
        (m) => m.sandbox,
      ),
    );
  sandbox
    .command('fund')
    .description('give a wallet ETH, USDC and LREP on the running sandbox (default: 1 ETH, 100 USDC, 100 LREP)')
    .argument('<address>', 'the wallet to fund')
    .option('--eth <amount>', 'set its ETH balance to this (display units; default 1; 0 leaves it)')
    .option('--usdc <amount>', 'mint this much USDC to it (display units; default 100; 0 for none)')
    .option('--lrep <amount>', 'mint this much LREP to it (display units; default 100; 0 for none)')
    .addHelpText(
      'after',
      examples([
        'loopsign sandbox fund 0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
        'loopsign sandbox fund 0x7099…79C8 --usdc 100 --eth 1',
      ]) +
        "\nThe sandbox is found by its manifest (LOOPSIGN_SANDBOX_MANIFEST, the config key sandboxManifest, or the default state dir). The address also gets the sandbox's human credential (it may rate gated content).\n",
    )
    .action(
      lazy(
        () => import('./sandbox.js'),
        (m) => m.sandboxFund,
      ),
    );
}
