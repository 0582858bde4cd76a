// Every derivation the spec gives for an ask (service-api.md §4, chain.md §6, §8.3): the wallet-bound
// clientRequestId, canonical payload, payloadHash, operationKey, question metadata, submission key, salts,
// reveal commitments and the x402 nonce. The client recomputes them to check the service; the sandbox uses the
// same code to build its plans, and the shared vectors pin both.
import { createHash } from 'node:crypto';
import { encodeAbiParameters, keccak256, toBytes, type Hex } from 'viem';
import { canonicalJson } from './canonical.js';
import {
  ASSET_ENUM,
  profileOf,
  type NormalizedAsk,
  type NormalizedQuestion,
  type NormalizedRoundConfig,
  type NormalizedBounty,
} from './ask-normalize.js';
import { DEFAULT_PROFILE, type ServiceProfile } from './profiles/index.js';
import type { HashLayout } from './profiles/types.js';

export const DEFAULT_METADATA_BASE = DEFAULT_PROFILE.hashes.defaultMetadataBase;

type Tags = Record<keyof HashLayout['tags'], Hex>;
const tagCache = new Map<string, Tags>();
/** The domain tags of a profile's hash layout, as keccak256 of each tag string (chain.md §6.4). */
export function tagsOf(profile: ServiceProfile = DEFAULT_PROFILE): Tags {
  let tags = tagCache.get(profile.id);
  if (!tags) {
    tags = Object.fromEntries(Object.entries(profile.hashes.tags).map(([k, v]) => [k, keccak256(toBytes(v))])) as Tags;
    tagCache.set(profile.id, tags);
  }
  return tags;
}
export const TAGS = tagsOf(DEFAULT_PROFILE);

/**
 * The question as the submit call and every on-chain hash carry it. For a gated question the service blanks its
 * URLs on chain (contextUrl, detailsUrl, imageUrls, videoUrl; the detailsHash stays): the context is released only
 * to raters who accept the confidentiality terms. The canonical payload and the metadata keep the URLs.
 */
export function onChainQuestion(q: NormalizedQuestion, profile: ServiceProfile = DEFAULT_PROFILE): NormalizedQuestion {
  if (q.confidentiality.visibility !== 'gated') return q;
  const blank: Partial<NormalizedQuestion> = {};
  for (const f of profile.ask.gated.blankOnChain) (blank as Record<string, unknown>)[f] = f === 'imageUrls' ? [] : '';
  return { ...q, ...blank };
}

export function sha256hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** service-api.md §4.1: the id the public path stores and hashes. */
export function walletBoundClientRequestId(chainId: number, wallet: string, clientRequestId: string): string {
  return 'wallet:' + sha256hex(`${chainId}:${wallet.toLowerCase()}:${clientRequestId}`).slice(0, 48);
}

export function operationKeyOf(payloadHash: string, profile: ServiceProfile = DEFAULT_PROFILE): Hex {
  return `0x${sha256hex(`${profile.hashes.operationKeyPrefix}${payloadHash}`)}`;
}

export function normalizeMetadataBase(base: string | undefined, profile: ServiceProfile = DEFAULT_PROFILE): string {
  const fallback = profile.hashes.defaultMetadataBase;
  if (!base) return fallback;
  try {
    const url = new URL(base);
    if (url.protocol !== 'https:') return fallback;
    return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
  } catch {
    return fallback;
  }
}

const str = (n: number | bigint) => n.toString();

function bountyJson(b: NormalizedBounty, sorted: boolean) {
  const base = {
    amount: str(b.amount),
    asset: b.asset,
    requiredVoters: str(b.requiredVoters),
    bountyEligibility: str(b.bountyEligibility),
  };
  return sorted
    ? { amount: base.amount, asset: base.asset, bountyEligibility: base.bountyEligibility, requiredVoters: base.requiredVoters }
    : base;
}

export function roundConfigJson(ask: NormalizedAsk) {
  const r = ask.roundConfig;
  return { questionDurationSeconds: str(r.questionDurationSeconds), minVoters: str(r.minVoters), maxVoters: str(r.maxVoters) };
}

function confidentialityJson(q: NormalizedQuestion) {
  const c = q.confidentiality;
  return { bond: c.bond, disclosurePolicy: c.disclosurePolicy, visibility: c.visibility };
}

/** chain.md §6.2: the question metadata object (hashed after key sorting). */
export function questionMetadata(ask: NormalizedAsk, q: NormalizedQuestion, index: number): Record<string, unknown> {
  return {
    bounty: bountyJson(ask.bounty, true),
    categoryId: str(q.categoryId),
    confidentiality: confidentialityJson(q),
    contextUrl: q.contextUrl,
    imageUrls: q.imageUrls,
    roundConfig: roundConfigJson(ask),
    schemaVersion: profileOf(ask).hashes.questionSchemaVersion,
    study: { bundleIndex: index },
    tags: q.tags,
    targetAudience: q.targetAudience,
    templateId: q.templateId,
    templateInputs: q.templateInputs,
    templateVersion: q.templateVersion,
    title: q.title,
    videoUrl: q.videoUrl,
  };
}

export function questionMetadataHash(ask: NormalizedAsk, q: NormalizedQuestion, index: number): Hex {
  return keccak256(toBytes(canonicalJson(questionMetadata(ask, q, index))));
}

export interface QuestionHashes {
  questionMetadataHash: Hex;
  questionMetadataUri: string;
  resultSpecHash: Hex;
  submissionKey: Hex;
  mediaHash: Hex;
  detailsTupleHash: Hex;
  textHash: Hex;
  confidentialityHash: Hex;
}

export interface AskHashes {
  effectiveClientRequestId: string;
  canonicalPayload: Record<string, unknown>;
  canonicalJson: string;
  payloadHash: string;
  operationKey: Hex;
  metadataBase: string;
  questions: QuestionHashes[];
  salts: Hex[];
  rewardTermsHash: Hex;
  roundConfigHash: Hex;
}

export type ResultSpecResolver = (templateId: string, templateVersion: number) => Hex;

export function mediaHash(q: NormalizedQuestion): Hex {
  return keccak256(encodeAbiParameters([{ type: 'string[]' }, { type: 'string' }], [q.imageUrls, q.videoUrl]));
}
export function detailsTupleHash(q: NormalizedQuestion): Hex {
  return keccak256(encodeAbiParameters([{ type: 'string' }, { type: 'bytes32' }], [q.detailsUrl, q.detailsHash.toLowerCase() as Hex]));
}
export function tagsString(q: NormalizedQuestion): string {
  return q.tags.join(',');
}
export function textHash(q: NormalizedQuestion): Hex {
  return keccak256(encodeAbiParameters([{ type: 'string' }, { type: 'string' }], [q.title, tagsString(q)]));
}
export function rewardTermsTuple(b: NormalizedBounty) {
  return { asset: ASSET_ENUM[b.asset], amount: b.amount, requiredVoters: BigInt(b.requiredVoters), bountyEligibility: b.bountyEligibility };
}
export function rewardTermsHash(b: NormalizedBounty): Hex {
  const t = rewardTermsTuple(b);
  return keccak256(
    encodeAbiParameters(
      [{ type: 'uint8' }, { type: 'uint256' }, { type: 'uint256' }, { type: 'uint8' }],
      [t.asset, t.amount, t.requiredVoters, t.bountyEligibility],
    ),
  );
}
export function roundConfigTuple(r: NormalizedRoundConfig) {
  return { epochDuration: r.epochDuration, maxDuration: r.maxDuration, minVoters: r.minVoters, maxVoters: r.maxVoters };
}
export function roundConfigHash(r: NormalizedRoundConfig): Hex {
  return keccak256(
    encodeAbiParameters(
      [{ type: 'uint32' }, { type: 'uint32' }, { type: 'uint16' }, { type: 'uint16' }],
      [r.epochDuration, r.maxDuration, r.minVoters, r.maxVoters],
    ),
  );
}
export function confidentialityTuple(q: NormalizedQuestion) {
  const c = q.confidentiality;
  const gated = c.visibility === 'gated';
  return {
    gated,
    bondAsset: c.bond?.asset === 'USDC' ? 1 : 0,
    bondAmount: BigInt(c.bond?.amount ?? '0'),
    flags: gated && c.disclosurePolicy === 'private_forever' ? 1 : 0,
  };
}
export function confidentialityHash(q: NormalizedQuestion): Hex {
  const t = confidentialityTuple(q);
  return keccak256(
    encodeAbiParameters(
      [{ type: 'bool' }, { type: 'uint8' }, { type: 'uint64' }, { type: 'uint8' }],
      [t.gated, t.bondAsset, t.bondAmount, t.flags],
    ),
  );
}
/** chain.md §6.6, over the question as it goes on chain (pass onChainQuestion(q) for a gated one). */
export function submissionKey(q: NormalizedQuestion, profile: ServiceProfile = DEFAULT_PROFILE): Hex {
  return keccak256(
    encodeAbiParameters(
      [
        { type: 'bytes32' },
        { type: 'uint256' },
        { type: 'bytes32' },
        { type: 'bytes32' },
        { type: 'string' },
        { type: 'string' },
        { type: 'string' },
      ],
      [tagsOf(profile).context, q.categoryId, mediaHash(q), detailsTupleHash(q), q.contextUrl, q.title, tagsString(q)],
    ),
  );
}

/** chain.md §6.8. */
export function questionSalt(
  operationKey: string,
  payloadHash: string,
  wallet: string,
  subKey: string,
  index: number,
  profile: ServiceProfile = DEFAULT_PROFILE,
): Hex {
  return `0x${sha256hex(`${profile.hashes.saltPrefix}${operationKey.toLowerCase()}:${payloadHash}:${wallet.toLowerCase()}:${subKey.toLowerCase()}:${index}`)}`;
}

/**
 * All hashes of an ask for a wallet. `effectiveId` is the wallet-bound id on the public path (the default),
 * or the raw id to reproduce the spec's "raw" vector rows.
 */
export function computeAskHashes(
  ask: NormalizedAsk,
  wallet: string,
  resultSpec: ResultSpecResolver,
  options: { metadataBase?: string; effectiveClientRequestId?: string } = {},
): AskHashes {
  const profile = profileOf(ask);
  const metadataBase = normalizeMetadataBase(options.metadataBase, profile);
  const effective = options.effectiveClientRequestId ?? walletBoundClientRequestId(ask.chainId, wallet, ask.clientRequestId);
  const questions: QuestionHashes[] = ask.questions.map((q, i) => {
    const qmh = questionMetadataHash(ask, q, i);
    const chainQ = onChainQuestion(q, profile);
    return {
      questionMetadataHash: qmh,
      questionMetadataUri: `${metadataBase}/question-metadata/${qmh}`,
      resultSpecHash: resultSpec(q.templateId, q.templateVersion),
      submissionKey: submissionKey(chainQ, profile),
      mediaHash: mediaHash(chainQ),
      detailsTupleHash: detailsTupleHash(chainQ),
      textHash: textHash(q),
      confidentialityHash: confidentialityHash(q),
    };
  });
  const canonicalPayload = {
    bounty: bountyJson(ask.bounty, false),
    chainId: ask.chainId,
    clientRequestId: effective,
    questions: ask.questions.map((q, i) => ({
      categoryId: str(q.categoryId),
      confidentiality: confidentialityJson(q),
      contextUrl: q.contextUrl,
      detailsHash: q.detailsHash,
      detailsUrl: q.detailsUrl,
      imageUrls: q.imageUrls,
      questionMetadataHash: questions[i]!.questionMetadataHash,
      questionMetadataUri: questions[i]!.questionMetadataUri,
      resultSpecHash: questions[i]!.resultSpecHash,
      tags: q.tags,
      targetAudience: q.targetAudience,
      templateId: q.templateId,
      templateInputs: q.templateInputs,
      templateVersion: q.templateVersion,
      title: q.title,
      videoUrl: q.videoUrl,
    })),
    roundConfig: roundConfigJson(ask),
  };
  // Insertion order, not sorted: JSON.stringify keeps it, and keeps the caller's templateInputs order.
  const json = JSON.stringify(canonicalPayload);
  const payloadHash = sha256hex(json);
  const operationKey = operationKeyOf(payloadHash, profile);
  const salts = questions.map((qh, i) => questionSalt(operationKey, payloadHash, wallet, qh.submissionKey, i, profile));
  return {
    effectiveClientRequestId: effective,
    canonicalPayload,
    canonicalJson: json,
    payloadHash,
    operationKey,
    metadataBase,
    questions,
    salts,
    rewardTermsHash: rewardTermsHash(ask.bounty),
    roundConfigHash: roundConfigHash(ask.roundConfig),
  };
}

/** chain.md §6.9: the commitment reserveSubmission stores for a single question. */
export function revealCommitment(ask: NormalizedAsk, hashes: AskHashes, submitter: string, salt: Hex = hashes.salts[0]!): Hex {
  const q = ask.questions[0]!;
  const h = hashes.questions[0]!;
  return keccak256(
    encodeAbiParameters(
      [
        { type: 'bytes32' },
        { type: 'bytes32' },
        { type: 'bytes32' },
        { type: 'bytes32' },
        { type: 'bytes32' },
        { type: 'uint256' },
        { type: 'bytes32' },
        { type: 'address' },
        { type: 'bytes32' },
        { type: 'bytes32' },
        { type: 'bytes32' },
        { type: 'bytes32' },
        { type: 'bytes32' },
      ],
      [
        tagsOf(profileOf(ask)).reveal,
        h.submissionKey,
        h.mediaHash,
        h.textHash,
        h.detailsTupleHash,
        q.categoryId,
        salt,
        submitter as Hex,
        hashes.rewardTermsHash,
        hashes.roundConfigHash,
        h.questionMetadataHash,
        h.resultSpecHash,
        h.confidentialityHash,
      ],
    ),
  );
}

/** chain.md §6.10 (no vectors exist; marked [inferred] in the spec). */
export function bundleRevealCommitment(ask: NormalizedAsk, hashes: AskHashes, submitter: string, salts: Hex[] = hashes.salts): Hex {
  const profile = profileOf(ask);
  const tags = tagsOf(profile);
  const items = ask.questions.map((question, i) => {
    const q = onChainQuestion(question, profile);
    const h = hashes.questions[i]!;
    const ctx = keccak256(
      encodeAbiParameters([{ type: 'string' }, { type: 'string' }, { type: 'string' }], [q.contextUrl, q.title, tagsString(q)]),
    );
    return keccak256(
      encodeAbiParameters(
        [
          { type: 'bytes32' },
          { type: 'bytes32' },
          { type: 'bytes32' },
          { type: 'bytes32' },
          { type: 'uint256' },
          { type: 'bytes32' },
          { type: 'uint256' },
          { type: 'bytes32' },
          { type: 'bytes32' },
        ],
        [
          tags.bundleItem,
          ctx,
          h.mediaHash,
          h.detailsTupleHash,
          q.categoryId,
          salts[i]!,
          BigInt(i),
          h.questionMetadataHash,
          h.resultSpecHash,
        ],
      ),
    );
  });
  const bundleHash = keccak256(encodeAbiParameters([{ type: 'bytes32' }, { type: 'bytes32[]' }], [tags.bundle, items]));
  const t = rewardTermsTuple(ask.bounty);
  const r = ask.roundConfig;
  return keccak256(
    encodeAbiParameters(
      [
        { type: 'bytes32' },
        { type: 'bytes32' },
        { type: 'address' },
        { type: 'uint8' },
        { type: 'uint256' },
        { type: 'uint256' },
        { type: 'uint8' },
        { type: 'uint32' },
        { type: 'uint32' },
        { type: 'uint16' },
        { type: 'uint16' },
      ],
      [
        tags.bundleReveal,
        bundleHash,
        submitter as Hex,
        t.asset,
        t.amount,
        t.requiredVoters,
        t.bountyEligibility,
        r.epochDuration,
        r.maxDuration,
        r.minVoters,
        r.maxVoters,
      ],
    ),
  );
}

function stringArrayHash(list: string[]): Hex {
  return keccak256(list.length === 0 ? '0x' : (`0x${list.map((s) => keccak256(toBytes(s)).slice(2)).join('')}` as Hex));
}

/** chain.md §8.3 submissionPayloadHash. */
export function submissionPayloadHash(q: NormalizedQuestion, salt: Hex): Hex {
  return keccak256(
    encodeAbiParameters(
      [
        { type: 'bytes32' },
        { type: 'bytes32' },
        { type: 'bytes32' },
        { type: 'bytes32' },
        { type: 'bytes32' },
        { type: 'bytes32' },
        { type: 'bytes32' },
        { type: 'uint256' },
        { type: 'bytes32' },
      ],
      [
        keccak256(toBytes(q.contextUrl)),
        stringArrayHash(q.imageUrls),
        keccak256(toBytes(q.videoUrl)),
        keccak256(toBytes(q.detailsUrl)),
        q.detailsHash.toLowerCase() as Hex,
        keccak256(toBytes(q.title)),
        keccak256(toBytes(tagsString(q))),
        q.categoryId,
        salt,
      ],
    ),
  );
}

export interface X402Addresses {
  contentRegistry: Hex;
  questionRewardPoolEscrow: Hex;
  x402QuestionSubmitter: Hex;
  feedbackBonusEscrow?: Hex;
}

export interface X402Authorization {
  from: Hex;
  to: Hex;
  value: bigint;
  validAfter: bigint;
  validBefore: bigint;
}

export function feedbackBonusTermsHash(amount: bigint, awarder: Hex, executeBy: bigint): Hex {
  return keccak256(encodeAbiParameters([{ type: 'uint256' }, { type: 'address' }, { type: 'uint256' }], [amount, awarder, executeBy]));
}

/** chain.md §8.3: the EIP-3009 nonce bound to this ask (standard, or one-shot when a USDC bonus rides along). */
export function x402Nonce(
  ask: NormalizedAsk,
  hashes: AskHashes,
  addresses: X402Addresses,
  auth: X402Authorization,
  bonus?: { amount: bigint; awarder: Hex; executeBy: bigint },
): Hex {
  const profile = profileOf(ask);
  const tags = tagsOf(profile);
  const h = hashes.questions[0]!;
  const spHash = submissionPayloadHash(onChainQuestion(ask.questions[0]!, profile), hashes.salts[0]!);
  if (!bonus) {
    return keccak256(
      encodeAbiParameters(
        [
          { type: 'bytes32' },
          { type: 'uint256' },
          { type: 'address' },
          { type: 'address' },
          { type: 'address' },
          { type: 'address' },
          { type: 'address' },
          { type: 'uint256' },
          { type: 'uint256' },
          { type: 'uint256' },
          { type: 'bytes32' },
          { type: 'bytes32' },
          { type: 'bytes32' },
          { type: 'bytes32' },
          { type: 'bytes32' },
          { type: 'bytes32' },
        ],
        [
          tags.x402,
          BigInt(ask.chainId),
          addresses.contentRegistry,
          addresses.questionRewardPoolEscrow,
          addresses.x402QuestionSubmitter,
          auth.from,
          auth.to,
          auth.value,
          auth.validAfter,
          auth.validBefore,
          spHash,
          hashes.rewardTermsHash,
          hashes.roundConfigHash,
          h.confidentialityHash,
          h.questionMetadataHash,
          h.resultSpecHash,
        ],
      ),
    );
  }
  if (!addresses.feedbackBonusEscrow) throw new Error('the one-shot nonce needs the FeedbackBonusEscrow address');
  return keccak256(
    encodeAbiParameters(
      [
        { type: 'bytes32' },
        { type: 'uint256' },
        { type: 'address' },
        { type: 'address' },
        { type: 'address' },
        { type: 'address' },
        { type: 'address' },
        { type: 'address' },
        { type: 'uint256' },
        { type: 'uint256' },
        { type: 'uint256' },
        { type: 'bytes32' },
        { type: 'bytes32' },
        { type: 'bytes32' },
        { type: 'bytes32' },
        { type: 'bytes32' },
        { type: 'bytes32' },
        { type: 'bytes32' },
      ],
      [
        tags.x402OneShot,
        BigInt(ask.chainId),
        addresses.contentRegistry,
        addresses.questionRewardPoolEscrow,
        addresses.feedbackBonusEscrow,
        addresses.x402QuestionSubmitter,
        auth.from,
        auth.to,
        auth.value,
        auth.validAfter,
        auth.validBefore,
        spHash,
        hashes.rewardTermsHash,
        hashes.roundConfigHash,
        h.confidentialityHash,
        feedbackBonusTermsHash(bonus.amount, bonus.awarder, bonus.executeBy),
        h.questionMetadataHash,
        h.resultSpecHash,
      ],
    ),
  );
}
