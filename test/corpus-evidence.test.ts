// The live evidence corpus (test/fixtures/vectors/live/evidence.json): packets made by the service's real generator
// and judged by its real verifier, with tampered copies. loopsign must reach the real verdict on every one — valid
// or not, and the same set of error codes (loopsign uses the service's codes unchanged, so no mapping is needed).
// The core verifier judges each packet with the corpus's pin and key id, with the pin alone (the key id derived from
// it) and with no trust anchor; the built binary judges every packet and mutation the same ways.
import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { verifyPacket } from '../src/evidence/packet.js';
import { keyIdOfPin } from '../src/evidence/keys.js';
import { capture } from './helpers/capture.js';
import { makeHome, readVector, runCli } from './helpers/cli.js';

interface Verdict {
  valid: boolean;
  errors: string[];
  packetDigest?: string;
}
interface Entry {
  id: string;
  packet: unknown;
  verdict: Verdict;
  pin: string;
  keyId: string;
}

const corpus = readVector('live/evidence.json');
const packets: Entry[] = corpus.cases.map((c: any) => ({
  id: c.id,
  packet: c.packet,
  verdict: c.verdict,
  pin: c.trust.publicKeyPin,
  keyId: c.trust.keyId,
}));
const mutations: Entry[] = corpus.cases.flatMap((c: any) =>
  c.mutations.map((m: any) => ({ id: m.id, packet: m.packet, verdict: m.verdict, pin: c.trust.publicKeyPin, keyId: c.trust.keyId })),
);
const entries = [...packets, ...mutations];
const noAnchor = new Map<string, Verdict>(corpus.cases.map((c: any) => [c.id, c.noTrustAnchorVerdict]));

/** The comparable part of a verdict: validity and the set of codes (the real verifier may repeat one). */
const judged = (v: { valid: boolean; errors: string[] }) => ({ valid: v.valid, errors: [...new Set(v.errors)].sort() });

// Verdicts counted only once they agreed, so the summary line can never claim more than was checked.
const agreed = { core: 0, binary: 0 };
const expected = { core: entries.length * 2 + packets.length, binary: entries.length * 2 + packets.length };
afterAll(() => {
  const all = agreed.core === expected.core && agreed.binary === expected.binary;
  console.log(
    `corpus evidence: ${packets.length} packets, ${mutations.length} mutations; verdicts agreeing with the real verifier: ` +
      `core ${agreed.core}/${expected.core}, built binary ${agreed.binary}/${expected.binary}${all ? ' — all agree' : ''}`,
  );
});

describe('the corpus', () => {
  it('has the packets and mutations its README describes', () => {
    expect(packets.map((p) => p.id)).toEqual(['automated-host-enforced', 'automated-advisory', 'manual-run']);
    expect(mutations.length).toBeGreaterThanOrEqual(30);
    expect(packets.every((p) => p.verdict.valid)).toBe(true);
    expect(mutations.every((m) => !m.verdict.valid)).toBe(true);
  });

  it('the key id loopsign derives from each pin is the corpus key id', () => {
    for (const p of packets) expect(keyIdOfPin(p.pin), p.id).toBe(p.keyId);
  });
});

describe('the core verifier reaches the real verdict', () => {
  it.each(entries.map((e) => [e.id, e] as const))('%s, with the pin and key id', (_id, e) => {
    const r = verifyPacket(e.packet, { publicKey: e.pin, keyId: e.keyId });
    expect(judged(r)).toEqual(judged(e.verdict));
    if (e.verdict.packetDigest) expect(r.packetDigest).toBe(e.verdict.packetDigest);
    agreed.core++;
  });

  it.each(entries.map((e) => [e.id, e] as const))('%s, with the pin alone (its derived key id)', (_id, e) => {
    expect(judged(verifyPacket(e.packet, { publicKey: e.pin }))).toEqual(judged(e.verdict));
    agreed.core++;
  });

  it.each(packets.map((e) => [e.id, e] as const))('%s, with no trust anchor', (_id, e) => {
    expect(judged(verifyPacket(e.packet, {}))).toEqual(judged(noAnchor.get(e.id)!));
    agreed.core++;
  });
});

describe('the built binary reaches the real verdict', () => {
  const home = makeHome();
  const dir = mkdtempSync(path.join(tmpdir(), 'loopsign-corpus-evidence-'));
  const fileOf = (e: Entry) => {
    const file = path.join(dir, `${e.id.replace(/[^A-Za-z0-9_-]/g, '_')}.json`);
    writeFileSync(file, JSON.stringify(e.packet));
    return file;
  };
  // Written once each, before any run reads them (two runs go at a time).
  const pins = new Map(packets.map((p) => [p.pin, path.join(dir, `${p.keyId.replace(':', '_')}.spki.txt`)]));
  for (const [pin, file] of pins) writeFileSync(file, `${pin}\n`);
  const pinOf = (e: Entry) => pins.get(e.pin)!;

  /** One run: exit 0 with the result when valid, exit 8 with the codes in the error when not. */
  async function judge(e: Entry, trust: string[]): Promise<Verdict> {
    const r = await runCli(['--json', 'verify-evidence', fileOf(e), ...trust], home);
    expect([0, 8], `${e.id}: ${r.stdout}${r.stderr}`).toContain(r.code);
    const doc = r.json();
    const result = r.code === 0 ? doc : doc.error;
    expect(doc.ok).toBe(r.code === 0);
    return { valid: result.valid, errors: result.errors, packetDigest: result.packetDigest };
  }

  /** Runs the binary over every entry, two at a time (the machine has two cores). */
  async function each(list: Entry[], trust: (e: Entry) => string[], check: (e: Entry, v: Verdict) => void): Promise<void> {
    const queue = [...list];
    const worker = async () => {
      for (let e = queue.shift(); e; e = queue.shift()) {
        check(e, await judge(e, trust(e)));
        agreed.binary++;
      }
    };
    await Promise.all([worker(), worker()]);
  }

  it(`every packet and mutation, with --public-key and --key-id (${entries.length} runs)`, async () => {
    await each(
      entries,
      (e) => ['--public-key', pinOf(e), '--key-id', e.keyId],
      (e, v) => {
        expect(judged(v), e.id).toEqual(judged(e.verdict));
        if (e.verdict.packetDigest) expect(v.packetDigest, e.id).toBe(e.verdict.packetDigest);
        // Also in the summary after the whole run.
        capture.count(
          packets.includes(e)
            ? 'live corpus: evidence packets judged as the real verifier does'
            : 'live corpus: evidence mutations judged as the real verifier does',
          e.id,
        );
      },
    );
  }, 120_000);

  it(`every packet and mutation, with --public-key alone: the key id derives from the pin (${entries.length} runs)`, async () => {
    await each(
      entries,
      (e) => ['--public-key', e.pin],
      (e, v) => expect(judged(v), e.id).toEqual(judged(e.verdict)),
    );
  }, 120_000);

  it('with no trust anchor: refused before verifying (exit 2, missing_trust_anchor), as the real verifier names it', async () => {
    for (const e of packets) {
      const r = await runCli(['--json', 'verify-evidence', fileOf(e)], home);
      expect(r.code).toBe(2);
      expect(noAnchor.get(e.id)!.errors).toEqual(['missing_trust_anchor']);
      expect(r.json().error.code).toBe('missing_trust_anchor');
      agreed.binary++;
    }
  });
});
