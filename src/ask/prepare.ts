// Everything an ask command needs before it talks to the service: the validated file, the configured chain,
// the unlocked wallet, and the service client. Invalid input fails here, before any network call (exit 2).
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import type { Context } from '../context.js';
import { UsageError } from '../errors.js';
import { readUserJson } from '../fsutil.js';
import { assertPaidRoundDeployment, resolveChain, type ResolvedChain } from '../chains/index.js';
import type { ResolvedConfig } from '../config.js';
import { AskFieldError, normalizeAsk, translateAsk, type NormalizedAsk } from '../protocol/ask-normalize.js';
import { DEFAULT_PROFILE, getProfile, type ServiceProfile } from '../protocol/profiles/index.js';
import type { Translation } from '../protocol/profiles/types.js';
import { TEMPLATES } from '../protocol/templates.js';
import { serviceClient, type ServiceClient } from '../service/client.js';
import { unlockWallet, type Signer } from '../wallet/unlock.js';

export interface LoadedAsk {
  /** What is sent: the file, made live-shaped when it was seed-shaped (never a field the service refuses). */
  body: Record<string, unknown>;
  ask: NormalizedAsk;
  /** What the translation of a seed-shaped file changed (empty for a live-shaped file). */
  translations: Translation[];
}

/**
 * A user's ask body checked locally: a seed-shaped body is translated into what the service accepts (or refused,
 * naming the field), then validated by the service's own rules. `now` (unix seconds) is the clock the translation
 * judges a bountyStartBy by. Throws UsageError (exit 2) naming the field.
 */
export function checkAskBody(raw: unknown, where: string, now: number, profile: ServiceProfile = DEFAULT_PROFILE): LoadedAsk {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw new UsageError('invalid_ask', `${where} must hold a JSON object`);
  try {
    const { body, translations } = translateAsk(raw, now, profile);
    const ask = normalizeAsk(withPlaceholderImages(body), { templates: TEMPLATES, profile });
    return { body, ask, translations };
  } catch (error) {
    if (error instanceof AskFieldError) throw new UsageError('invalid_ask', `${where}: ${error.message}`, { details: { field: error.field } });
    throw error;
  }
}

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
    const stated = ask.questions.map((q) => q.detailsHash);
    if (!stated.includes(hash as `0x${string}`)) {
      throw new UsageError('invalid_ask', `${file}: question.detailsHash: does not match the SHA-256 of ${detailsFile} (${hash})`, { details: { field: 'question.detailsHash' } });
    }
  }
  return loaded;
}

/** Local image files (question.imageFiles) count as images for validation; they become real URLs on upload. */
function withPlaceholderImages(body: object): object {
  const b = structuredClone(body) as Record<string, any>;
  const questions = Array.isArray(b.questions) ? b.questions : b.question ? [b.question] : [];
  for (const q of questions) {
    if (!Array.isArray(q?.imageFiles)) continue;
    q.imageUrls = [...(q.imageUrls ?? []), ...q.imageFiles.map((_: unknown, i: number) => `https://placeholder.invalid/api/attachments/images/att_localimagefile${String(i).padStart(4, '0')}.webp#sha256=0x${'0'.repeat(64)}`)];
  }
  return b;
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
