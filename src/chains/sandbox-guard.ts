// The one check between the sandbox chain and the production service (issue 36): kept apart from chains/index.ts so
// that the service client can run it without loading zod and viem.
import { UsageError } from '../errors.js';
import type { ChainConfig } from './table.js';

/**
 * On the sandbox chain (31337), the service, its contracts and its RPC are those of the running sandbox, named by its
 * manifest. Without one, nothing may be sent: the defaults are the production service's, where an ask meant for the
 * sandbox (and the wallet's address) must never go. Exit 2 naming the manifest path; no other chain is suggested.
 */
export function assertSandboxRunning(chain: ChainConfig): void {
  if (chain.missingManifest === undefined) return;
  throw new UsageError(
    'sandbox_not_running',
    `chain 31337 is the local sandbox, but there is no sandbox manifest at ${chain.missingManifest}, so no sandbox service to send to; nothing was sent`,
    {
      hint: 'start the sandbox with `loopsign sandbox` (it writes that manifest), or point LOOPSIGN_SANDBOX_MANIFEST at the manifest of the sandbox you run',
      details: { manifest: chain.missingManifest },
    },
  );
}
