// What test/evidence.test.ts (the core) and test/evidence.cli.test.ts (the built binary) both use: the shared example
// packet and its pin, fresh signing keys, and audit exports written out row by row.
import { generateKeyPairSync, sign as cryptoSign } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { sha256EvidenceValue } from '../../src/evidence/packet.js';
import { GENESIS_DIGEST } from '../../src/evidence/audit.js';
import { keyIdOf, b64url } from '../../src/evidence/keys.js';
import { canonicalJson } from '../../src/protocol/canonical.js';
import { specDigest } from './audit.js';
import { VECTORS } from './cli.js';

export const PACKET_FILE = path.join(VECTORS, 'synthetic-evidence-v4.json');
export const PIN_FILE = path.join(VECTORS, 'synthetic-evidence-v4.spki.txt');
export const KEY_ID = 'ed25519:2d5798c16bafaed29bdbcca0';
export const packet = () => JSON.parse(readFileSync(PACKET_FILE, 'utf8'));
export const PIN = readFileSync(PIN_FILE, 'utf8').trim();

export function freshKey() {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const spki = b64url(publicKey.export({ format: 'der', type: 'spki' }));
  return { spki, keyId: keyIdOf(Buffer.from(spki, 'base64url')), privateKey };
}
export function resign(p: any, key: ReturnType<typeof freshKey>, order: 'code-unit' | 'locale-en-US') {
  p.signing = { algorithm: 'Ed25519', keyId: key.keyId, publicKey: key.spki };
  const signed = { payload: p.payload, signing: p.signing };
  p.packetDigest = sha256EvidenceValue(signed, order);
  p.signature = b64url(cryptoSign(null, Buffer.from(canonicalJson(signed, order)), key.privateKey));
  return p;
}

/** A valid audit export of n events (camelCase columns if asked); `nullAs: 'string'` hashes as the service's checker does. */
export function auditChain(n: number, camel = false, options: { reason?: string | null; nullAs?: 'null' | 'string' } = {}) {
  let previous = GENESIS_DIGEST;
  const events = [];
  for (let i = 1; i <= n; i++) {
    const e: any = {
      event_id: `evt_${i}`,
      workspace_id: 'ws_1',
      sequence: i,
      previous_digest: previous,
      home_region: 'eu',
      actor_kind: 'agent',
      actor_reference: 'wallet:0xabc',
      assurance_method: 'wallet_signature',
      action: i % 2 ? 'ask.create' : 'ask.confirm',
      target_kind: 'ask',
      target_id: `op_${i}`,
      purpose: 'paid_feedback',
      reason: options.reason === undefined ? null : options.reason,
      request_correlation: null,
      result: 'success',
      metadata_json: JSON.stringify({ Amount: '1', alpha: i, nested: { B: 1, a: 2 } }),
      occurred_at: new Date(1_700_000_000_000 + i * 1000).toISOString(),
    };
    e.event_digest = specDigest(previous, e, options.nullAs);
    previous = e.event_digest;
    if (camel) {
      for (const k of Object.keys(e)) if (k.includes('_')) (e[k.replace(/_([a-z])/g, (_m, c) => c.toUpperCase())] = e[k]), delete e[k];
    }
    events.push(e);
  }
  return {
    exportedAt: new Date().toISOString(),
    format: 'rateloop-audit-v1',
    integrity: { eventCount: n, headDigest: previous, valid: true },
    events,
    retention: {},
    workspaceId: 'ws_1',
  };
}
