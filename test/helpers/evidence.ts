// What the evidence tests share, in-process (test/evidence.test.ts, test/corpus-evidence.test.ts) and through the built
// binary (their .cli twins): the example packet and its pin, fresh signing keys, audit exports written out row by row,
// and the live evidence corpus.
import { generateKeyPairSync, sign as cryptoSign } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { sha256EvidenceValue } from '../../src/evidence/packet.js';
import { GENESIS_DIGEST } from '../../src/evidence/audit.js';
import { keyIdOf, b64url } from '../../src/evidence/keys.js';
import { canonicalJson } from '../../src/protocol/canonical.js';
import { specDigest } from './audit.js';
import { readVector, VECTORS } from './cli.js';

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
      reason: options.reason === undefined ? 'requested' : options.reason,
      request_correlation: null,
      result: 'success',
      metadata_json: JSON.stringify({ Amount: '1', alpha: i, nested: { B: 1, a: 2 } }),
      occurred_at: new Date(1_700_000_000_000 + i * 1000).toISOString(),
    };
    e.event_digest = specDigest(previous, e, options.nullAs);
    previous = e.event_digest;
    if (camel) {
      // camelCase rows carry their metadata as an object (`metadata`), as the service's checker reads them.
      e.metadata = JSON.parse(e.metadata_json);
      delete e.metadata_json;
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

/** A verdict of the real verifier (the live corpus), or loopsign's. */
export interface Verdict {
  valid: boolean;
  errors: string[];
  packetDigest?: string;
}

/** A packet of the live evidence corpus (test/fixtures/vectors/live/evidence.json), or a tampered copy, with its trust anchor. */
export interface CorpusEntry {
  id: string;
  packet: unknown;
  verdict: Verdict;
  pin: string;
  keyId: string;
}

/** The live evidence corpus: its packets, their mutations, both, and each packet's verdict with no trust anchor. */
export function liveEvidence() {
  const corpus = readVector('live/evidence.json');
  const packets: CorpusEntry[] = corpus.cases.map((c: any) => ({
    id: c.id,
    packet: c.packet,
    verdict: c.verdict,
    pin: c.trust.publicKeyPin,
    keyId: c.trust.keyId,
  }));
  const mutations: CorpusEntry[] = corpus.cases.flatMap((c: any) =>
    c.mutations.map((m: any) => ({ id: m.id, packet: m.packet, verdict: m.verdict, pin: c.trust.publicKeyPin, keyId: c.trust.keyId })),
  );
  const noAnchor = new Map<string, Verdict>(corpus.cases.map((c: any) => [c.id, c.noTrustAnchorVerdict]));
  return { packets, mutations, entries: [...packets, ...mutations], noAnchor };
}

/** The comparable part of a verdict: validity and the set of codes (the real verifier may repeat one). */
export const judged = (v: { valid: boolean; errors: string[] }) => ({ valid: v.valid, errors: [...new Set(v.errors)].sort() });

/** Each entry's packet and each pin written to files in dir, as a user saves them: the packet's file, and its pin's. */
export function corpusFiles(dir: string, packets: CorpusEntry[]) {
  const pins = new Map(packets.map((p) => [p.pin, path.join(dir, `${p.keyId.replace(':', '_')}.spki.txt`)]));
  for (const [pin, file] of pins) writeFileSync(file, `${pin}\n`);
  return {
    fileOf(e: CorpusEntry): string {
      const file = path.join(dir, `${e.id.replace(/[^A-Za-z0-9_-]/g, '_')}.json`);
      writeFileSync(file, JSON.stringify(e.packet));
      return file;
    },
    pinOf: (e: CorpusEntry) => pins.get(e.pin)!,
  };
}
