// The signed-message guard (service-api.md §9; issues 5 and 6): loopsign signs a wallet message only when it is a
// plain string with the service's signed-action layout, for the action this command expects, naming this wallet,
// expiring within the next 10 minutes, and — where the payload can be recomputed locally — with the same payload
// hash. Raw hex, transactions and typed data are never signed on this path. Only the terms message has lines
// beyond the common layout, and it has its own guard (terms-guard.ts) that rebuilds it whole.
import { createHash } from 'node:crypto';
import { guardRefusal, type Refuse } from './guard-refusal.js';

export const ACTIONS = {
  'attachments:upload_image': 'RateLoop image upload',
  'confidentiality_terms:accept': 'RateLoop confidential context',
  'agent_callbacks:register_public_webhook': 'RateLoop public webhook',
} as const;
export type SignedAction = keyof typeof ACTIONS;

export const MAX_EXPIRY_MS = 10 * 60 * 1000;
const CLOCK_SKEW_MS = 60 * 1000;

export interface ParsedMessage {
  title: string;
  action: string;
  wallet: string;
  payloadHash: string;
  nonce: string;
  expiresAt: Date;
  extra: string[];
}

export const refuse: Refuse = guardRefusal(
  'message_refused',
  'refused to sign',
  'nothing was signed; the service returned a message loopsign will not sign',
);

export function payloadHash(parts: (string | number)[]): string {
  return createHash('sha256').update(parts.map(String).join('\n'), 'utf8').digest('hex');
}

export function parseSignedAction(message: unknown): ParsedMessage {
  if (typeof message !== 'string') refuse('not_a_message', 'the service sent typed data or an object where a text message was expected');
  if (/^0x[0-9a-fA-F]*$/.test(message.trim())) refuse('raw_hex', 'the service asked to sign raw hex (it could be a transaction or a hash)');
  const lines = message.split('\n');
  if (lines.length < 7 || lines[1] !== '')
    refuse('bad_layout', 'the message does not have the signed-action layout (title, blank line, fields)');
  const field = (i: number, name: string): string => {
    const line = lines[i] ?? '';
    if (!line.startsWith(`${name}: `)) refuse('bad_layout', `line ${i + 1} should be "${name}: …"`);
    return line.slice(name.length + 2);
  };
  const nonce = field(lines.length - 2, 'Nonce');
  const expires = field(lines.length - 1, 'Expires At');
  if (!/^[0-9a-f]{32}$/.test(nonce)) refuse('bad_layout', 'the nonce is not 32 hex characters');
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.000Z$/.test(expires))
    refuse('bad_layout', 'Expires At is not an ISO timestamp on a whole second');
  return {
    title: lines[0]!,
    action: field(2, 'Action'),
    wallet: field(3, 'Wallet'),
    payloadHash: field(4, 'Payload Hash'),
    nonce,
    expiresAt: new Date(expires),
    extra: lines.slice(5, lines.length - 2),
  };
}

export interface MessageExpectation {
  action: SignedAction;
  wallet: string;
  /** The payload parts loopsign itself sent, when the hash can be recomputed (image uploads, webhooks). */
  payloadParts?: (string | number)[];
  now?: number;
}

/** The rules every signed-action message shares: title, action, wallet, payload hash form, expiry. */
export function checkHeader(m: ParsedMessage, expect: Pick<MessageExpectation, 'action' | 'wallet' | 'now'>): void {
  if (m.title !== ACTIONS[expect.action]) refuse('wrong_title', `the message title "${m.title}" is not "${ACTIONS[expect.action]}"`);
  if (m.action !== expect.action) refuse('wrong_action', `the message is for action ${m.action}, not ${expect.action}`);
  if (m.wallet !== expect.wallet.toLowerCase())
    refuse('wrong_wallet', `the message is for wallet ${m.wallet}, not this wallet ${expect.wallet.toLowerCase()}`);
  if (!/^[0-9a-f]{64}$/.test(m.payloadHash)) refuse('bad_layout', 'the payload hash is not 64 lowercase hex characters');
  const now = expect.now ?? Date.now();
  if (m.expiresAt.getTime() <= now - CLOCK_SKEW_MS) refuse('expired', `the message expired at ${m.expiresAt.toISOString()}`);
  if (m.expiresAt.getTime() > now + MAX_EXPIRY_MS + CLOCK_SKEW_MS)
    refuse('far_expiry', `the message stays valid until ${m.expiresAt.toISOString()}, more than 10 minutes from now`);
}

/** Returns the exact message to sign (verbatim) once every rule passes. Not for the terms message (terms-guard.ts). */
export function checkSignedAction(message: unknown, expect: MessageExpectation): string {
  const m = parseSignedAction(message);
  checkHeader(m, expect);
  if (expect.payloadParts) {
    const recomputed = payloadHash(expect.payloadParts);
    if (recomputed !== m.payloadHash)
      refuse('payload_hash_mismatch', `the payload hash is not the hash of what loopsign sent (expected ${recomputed})`);
  }
  if (m.extra.length > 0) refuse('bad_layout', 'the message carries extra lines this action does not have');
  return message as string;
}
