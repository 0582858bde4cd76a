// Everything an ask command needs before it talks to the service: the validated file, the configured chain,
// the unlocked wallet, and the service client. Invalid input fails here, before any network call (exit 2).
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { Context } from '../context.js';
import { UsageError } from '../errors.js';
import { readUserJson } from '../fsutil.js';
import { assertPaidRoundDeployment, type ResolvedChain } from '../chains/index.js';
import { checkAskBody, type LoadedAsk } from './ask-body.js';
import { getProfile } from '../protocol/profiles/index.js';
import { RefusedError } from '../errors.js';
import type { Clock } from '../context.js';
import type { Wallet } from '../wallet/signers/types.js';
import { describeSource } from '../wallet/signers/types.js';

export type { LoadedAsk } from './ask-body.js';

/**
 * An ask as the user gave it: a file they named, or its JSON object inline (an MCP tool's `ask` argument, for a host
 * with no file to write). Both are checked alike and carry the same journal identity (their clientRequestId).
 */
export type AskSource = { file: string; inline?: undefined } | { inline: Record<string, unknown>; file?: undefined };

/** How messages name an ask: its file, or "the inline ask". */
export function askLabel(source: AskSource): string {
  return source.file ?? 'the inline ask';
}

/** The folder an ask's relative paths (question.imageFiles) are read from: its file's, or the working directory. */
export function askFolder(source: AskSource): string {
  return source.file === undefined ? process.cwd() : path.dirname(path.resolve(source.file));
}

/** Read and validate an ask file locally (interface.md rules), naming the field on failure. */
export async function loadAskFile(
  file: string,
  chainId: number,
  detailsFile?: string,
  profileId?: string,
  clock: Clock = { now: () => Date.now() },
): Promise<LoadedAsk> {
  return loadAsk({ file }, chainId, detailsFile, profileId, clock);
}

/** Validate an ask, from its file or inline, exactly alike (interface.md rules), naming the field on failure. */
export async function loadAsk(
  source: AskSource,
  chainId: number,
  detailsFile?: string,
  profileId?: string,
  clock: Clock = { now: () => Date.now() },
): Promise<LoadedAsk> {
  const file = askLabel(source);
  // Inline: a copy, so that nothing done to the body reaches the caller's object (a tool's arguments).
  const raw = source.file === undefined ? structuredClone(source.inline) : await readUserJson(source.file, 'ask file', 60 * 1024 * 1024);
  const loaded = checkAskBody(raw, file, Math.floor(clock.now() / 1000), getProfile(profileId), { requireMaxPayment: true });
  const ask = loaded.ask;
  if (ask.chainId !== chainId) {
    throw new UsageError('chain_mismatch', `${file}: chainId ${ask.chainId} is not the configured chain ${chainId}`, {
      // From the sandbox's chain, no hint points at another chain (issue 36: never production by accident).
      hint:
        chainId === 31337
          ? `set chainId to 31337 in the ${source.file === undefined ? 'ask' : 'file'}: this loopsign is configured for the local sandbox chain`
          : `change chainId in the ${source.file === undefined ? 'ask' : 'file'} to ${chainId}, or run with --chain-id ${ask.chainId}`,
    });
  }
  if (detailsFile !== undefined) {
    const bytes = await fs.readFile(detailsFile).catch(() => {
      throw new UsageError('file_not_found', `details file ${detailsFile} cannot be read`);
    });
    const hash = `0x${createHash('sha256').update(bytes).digest('hex')}`;
    if (!ask.questions.some((q) => q.detailsHash.toLowerCase() === hash)) {
      throw new UsageError('invalid_ask', `${file}: question.detailsHash: does not match the SHA-256 of ${detailsFile} (${hash})`, {
        details: { field: 'question.detailsHash' },
      });
    }
  }
  return loaded;
}

/** The configured chain, which must have a trusted deployment of the service's contracts to pay a round on. */
export async function paidRound(ctx: Context): Promise<ResolvedChain> {
  const settings = await ctx.chainSettings();
  assertPaidRoundDeployment(settings.chain);
  return settings;
}

/**
 * `--atomic` may delegate the wallet (EIP-7702): refused before anything is asked or signed when the signer cannot sign
 * that authorization (a remote JSON-RPC signer; a Ledger whose app does not whitelist the pinned delegate) and the
 * wallet is not delegated to the pinned delegate already (then every batch is a plain transaction any signer signs).
 */
export async function refuseDelegationIfUnsupported(wallet: Wallet, ctx: Context): Promise<void> {
  if (wallet.capabilities.authorization) return;
  const { settings, client } = await ctx.chain();
  const delegate = settings.chain.batchDelegate;
  const code = ((await client.getCode({ address: wallet.address })) ?? '0x').toLowerCase();
  if (delegate && code === `0xef0100${delegate.slice(2).toLowerCase()}`) return;
  // An owner already on the pinned DeleGator (a budget grant, issue 38) runs its batches there: no authorization needed.
  const { delegationAnchors, hasDelegationAnchors } = await import('../chains/delegation.js');
  if (hasDelegationAnchors(settings.chain.chainId, settings.manifest)) {
    const deleGator = delegationAnchors(settings.chain.chainId, settings.manifest).contracts.deleGator;
    if (code === `0xef0100${deleGator.slice(2).toLowerCase()}`) return;
  }
  throw new RefusedError(
    'signer_cannot_delegate',
    `refused: --atomic may need an EIP-7702 authorization, which ${describeSource(wallet.source)} cannot sign: ${wallet.capabilities.authorizationReason ?? 'not supported'}; nothing was signed`,
    {
      hint: 'run without --atomic (the plan runs call by call), or delegate the wallet once with the keystore or a KMS key',
      details: { rule: 'signer_cannot_delegate' },
    },
  );
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
