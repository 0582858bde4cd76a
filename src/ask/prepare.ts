// Everything an ask command needs before it talks to the service: the validated file, the configured chain,
// the unlocked wallet, and the service client. Invalid input fails here, before any network call (exit 2).
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import type { Context } from '../context.js';
import { UsageError } from '../errors.js';
import { readUserJson } from '../fsutil.js';
import { assertPaidRoundDeployment, resolveChain, type ResolvedChain } from '../chains/index.js';
import type { ResolvedConfig } from '../config.js';
import { checkAskBody, type LoadedAsk } from './ask-body.js';
import { getProfile } from '../protocol/profiles/index.js';
import { serviceClient, type ServiceClient } from '../service/client.js';
import { startUnlock, unlockWallet, type Signer, type Unlocking } from '../wallet/unlock.js';

export type { LoadedAsk } from './ask-body.js';

/** Read and validate an ask file locally (interface.md rules), naming the field on failure. */
export async function loadAskFile(file: string, chainId: number, detailsFile?: string, profileId?: string): Promise<LoadedAsk> {
  const raw = await readUserJson(file, 'ask file', 60 * 1024 * 1024);
  const loaded = checkAskBody(raw, file, Math.floor(Date.now() / 1000), getProfile(profileId));
  const ask = loaded.ask;
  if (ask.chainId !== chainId) {
    throw new UsageError('chain_mismatch', `${file}: chainId ${ask.chainId} is not the configured chain ${chainId}`, {
      hint: `run with --chain-id ${ask.chainId}, or change chainId in the file`,
    });
  }
  if (ask.maxPaymentAmount === null) {
    throw new UsageError('invalid_ask', `${file}: maxPaymentAmount: is required (the most this ask may spend, in atomic units)`, { details: { field: 'maxPaymentAmount' } });
  }
  if (detailsFile !== undefined) {
    const bytes = await fs.readFile(detailsFile).catch(() => {
      throw new UsageError('file_not_found', `details file ${detailsFile} cannot be read`);
    });
    const hash = `0x${createHash('sha256').update(bytes).digest('hex')}`;
    if (!ask.questions.some((q) => q.detailsHash.toLowerCase() === hash)) {
      throw new UsageError('invalid_ask', `${file}: question.detailsHash: does not match the SHA-256 of ${detailsFile} (${hash})`, { details: { field: 'question.detailsHash' } });
    }
  }
  return loaded;
}

export interface AskEnvironment {
  config: ResolvedConfig;
  chain: ResolvedChain;
  signer: Signer;
  service: ServiceClient;
}

export async function askEnvironment(ctx: Context, spends: boolean, needSigner = true): Promise<AskEnvironment> {
  const config = await ctx.config();
  const chain = await resolveChain(config);
  // Signing a paid round needs a trusted deployment of the service's contracts on this chain: say so now.
  if (spends && needSigner) assertPaidRoundDeployment(chain.chain);
  const service = serviceClient(config, chain, ctx.out, spends);
  const signer = needSigner ? await unlockWallet(config, ctx.out) : (undefined as unknown as Signer);
  return { config, chain, signer, service };
}

/** The environment of a paid ask, with the wallet still unlocking (startUnlock): the key is awaited only to sign. */
export async function askEnvironmentUnlocking(ctx: Context): Promise<Omit<AskEnvironment, 'signer'> & { unlock: Unlocking }> {
  const { signer: _none, ...env } = await askEnvironment(ctx, true, false);
  assertPaidRoundDeployment(env.chain.chain);
  return { ...env, unlock: await startUnlock(env.config, ctx.out) };
}

/** The body sent to the service: the (translated) file, plus walletAddress and an explicit paymentMode. */
export function outgoingBody(loaded: LoadedAsk, wallet: string, paymentMode: string): Record<string, unknown> {
  const fileWallet = loaded.body.walletAddress ?? loaded.body.agentWalletAddress;
  if (fileWallet !== undefined && String(fileWallet).toLowerCase() !== wallet.toLowerCase()) {
    throw new UsageError('wallet_mismatch', `the ask file names wallet ${String(fileWallet)}, but the unlocked wallet is ${wallet}`, {
      hint: 'remove walletAddress from the file (loopsign fills it in) or use the matching keystore',
    });
  }
  return { ...loaded.body, walletAddress: fileWallet ?? wallet, paymentMode };
}
