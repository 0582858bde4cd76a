// The confidentiality-terms message guard (service-api.md §9; issue 11 §5, issue 12 §3.3). The terms message is the
// signed-action layout with four more lines — `Terms URI:`, `Terms Version:`, `Terms Hash:`, `Terms: <full text>` —
// where the text itself spans many lines (the live corpus's has 41). loopsign reads the text as everything between
// `Terms: ` and the `Nonce:` line, checks that the stated hash is the hash of that whole text, rebuilds the message
// from its parts and signs only when the rebuild is byte for byte the message: nothing outside the layout is signed,
// and the text the user is shown is exactly the text signed.
import { createHash } from 'node:crypto';
import { checkHeader, parseSignedAction, payloadHash, refuse } from './message-guard.js';

export const TERMS_ACTION = 'confidentiality_terms:accept';
export const TERMS_TITLE = 'RateLoop confidential context';
/** The live text is about 3.7 KB; a terms text larger than this is not a terms text. */
export const MAX_TERMS_TEXT_BYTES = 64 * 1024;

// Characters that would make the shown text differ from the signed one on a terminal (controls, escape sequences,
// carriage returns, bidi overrides): the text may hold printable characters and newlines only.
const UNSHOWABLE = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

export interface TermsText {
  version: string;
  uri: string;
  text: string;
}

/** termsDocHash = SHA-256 hex of `<version>\n<uri>\n<whole text>`. */
export function termsDocHash(t: TermsText): string {
  return createHash('sha256').update(`${t.version}\n${t.uri}\n${t.text}`, 'utf8').digest('hex');
}

export interface TermsMessageParts extends TermsText {
  wallet: string;
  payloadHash: string;
  docHash: string;
  nonce: string;
  expiresAt: string;
}

/** The message exactly as the service lays it out (lines joined with \n, no trailing newline). */
export function buildTermsMessage(p: TermsMessageParts): string {
  return [
    TERMS_TITLE,
    '',
    `Action: ${TERMS_ACTION}`,
    `Wallet: ${p.wallet}`,
    `Payload Hash: ${p.payloadHash}`,
    `Terms URI: ${p.uri}`,
    `Terms Version: ${p.version}`,
    `Terms Hash: ${p.docHash}`,
    `Terms: ${p.text}`,
    `Nonce: ${p.nonce}`,
    `Expires At: ${p.expiresAt}`,
  ].join('\n');
}

/**
 * Values of the payload that only the service has: its stored record of the gated question (content, details,
 * metadata and media hashes, from the asker's submission) and its operator frontend address. The live service does
 * not send them with the challenge, so on the signing path they are normally unknown and the payload hash cannot be
 * recomputed; when a caller has them (an audit, a future service answer) the whole hash is recomputed and compared.
 */
export interface TermsServiceParts {
  identityKey?: string;
  frontendAddress: string;
  questionMetadataHash: string;
  contentHash: string;
  detailsHash: string;
  mediaTupleHash: string;
}

export interface TermsPayloadKnown {
  wallet: string;
  chainId: number;
  /** The trusted ContentRegistry of the configured chain (never the service's word). */
  contentRegistry: string;
  contentId: string;
}

/** The 12 payload parts in the service's order (service-api.md §9.2; the live corpus's terms.json). */
export function termsPayloadParts(known: TermsPayloadKnown, terms: TermsText & { docHash: string }, service: TermsServiceParts): string[] {
  return [
    known.wallet.toLowerCase(),
    service.identityKey ?? '',
    `${known.chainId}:${known.contentRegistry.toLowerCase()}`,
    service.frontendAddress,
    known.contentId,
    service.questionMetadataHash,
    service.contentHash,
    service.detailsHash,
    service.mediaTupleHash,
    terms.version,
    terms.uri,
    terms.docHash,
  ];
}

export interface TermsExpectation {
  wallet: string;
  now?: number;
  /** termsDocHash, termsUri, termsVersion from the challenge answer: each, when present, must equal the message's. */
  stated?: Record<string, unknown>;
  /** With the service's parts (see TermsServiceParts), the payload hash is recomputed and compared. */
  payload?: TermsPayloadKnown & { service: TermsServiceParts };
}

export interface CheckedTerms extends TermsText {
  /** The exact message to sign. */
  message: string;
  docHash: string;
  payloadHash: string;
  /** True when the payload hash was recomputed from known parts (see TermsServiceParts). */
  payloadChecked: boolean;
}

function line(extra: string[], i: number, name: string): string {
  const l = extra[i];
  if (l === undefined || !l.startsWith(`${name}: `)) refuse('bad_layout', `the terms message should have "${name}: …" as line ${i + 6}`);
  return l.slice(name.length + 2);
}

export function checkTermsMessage(message: unknown, expect: TermsExpectation): CheckedTerms {
  const m = parseSignedAction(message);
  checkHeader(m, { action: TERMS_ACTION, wallet: expect.wallet, now: expect.now });
  // The extra lines are exactly: URI, version, hash, then the text (its first line after "Terms: ", then the rest).
  const uri = line(m.extra, 0, 'Terms URI');
  const version = line(m.extra, 1, 'Terms Version');
  const docHash = line(m.extra, 2, 'Terms Hash');
  const text = [line(m.extra, 3, 'Terms'), ...m.extra.slice(4)].join('\n');
  if (!/^\/[A-Za-z0-9._~/-]{0,200}$/.test(uri)) refuse('bad_terms', `the terms URI "${uri}" is not a path on the service`);
  if (!/^[A-Za-z0-9._-]{1,100}$/.test(version)) refuse('bad_terms', `the terms version "${version}" is not a version name`);
  if (!/^[0-9a-f]{64}$/.test(docHash)) refuse('bad_terms', 'the terms hash is not 64 lowercase hex characters');
  if (text.trim().length === 0) refuse('bad_terms', 'the terms text is empty');
  if (Buffer.byteLength(text, 'utf8') > MAX_TERMS_TEXT_BYTES)
    refuse('bad_terms', `the terms text is longer than ${MAX_TERMS_TEXT_BYTES} bytes`);
  if (UNSHOWABLE.test(text))
    refuse('bad_terms', 'the terms text holds control characters, so what you would be shown is not what would be signed');
  const recomputed = termsDocHash({ version, uri, text });
  if (recomputed !== docHash)
    refuse('terms_hash_mismatch', `the terms text does not hash to the stated terms hash (its hash is ${recomputed})`);
  const stated = expect.stated ?? {};
  for (const [key, value] of [
    ['termsDocHash', docHash],
    ['termsUri', uri],
    ['termsVersion', version],
  ] as const) {
    if (stated[key] !== undefined && stated[key] !== null && stated[key] !== value) {
      refuse('terms_mismatch', `the challenge states ${key} ${String(stated[key])}, but the message says ${value}`);
    }
  }
  const rebuilt = buildTermsMessage({
    wallet: m.wallet,
    payloadHash: m.payloadHash,
    uri,
    version,
    docHash,
    text,
    nonce: m.nonce,
    expiresAt: m.expiresAt.toISOString(),
  });
  if (rebuilt !== message) refuse('bad_layout', 'the terms message has something outside its layout');
  let payloadChecked = false;
  if (expect.payload) {
    const parts = termsPayloadParts(expect.payload, { version, uri, text, docHash }, expect.payload.service);
    const hash = payloadHash(parts);
    if (hash !== m.payloadHash)
      refuse('payload_hash_mismatch', `the payload hash is not the hash of this wallet, deployment, question and terms (expected ${hash})`);
    payloadChecked = true;
  }
  return { message: rebuilt, version, uri, text, docHash, payloadHash: m.payloadHash, payloadChecked };
}
