// The live evidence corpus (test/fixtures/vectors/live/evidence.json): packets made by the service's real generator
// and judged by its real verifier, with tampered copies. loopsign must reach the real verdict on every one — valid
// or not, and the same set of error codes (loopsign uses the service's codes unchanged, so no mapping is needed).
// The core verifier judges each packet with the corpus's pin and key id, with the pin alone (the key id derived from
// it) and with no trust anchor; so does the function `verify-evidence` runs (verifyEvidenceFile: the packet read from
// its file, the pin from its file or given literally), on every packet and mutation. The built binary gives the same
// verdicts for a representative set, with its exit codes and documents: test/corpus-evidence.cli.test.ts.
import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { verifyPacket } from '../src/evidence/packet.js';
import { keyIdOfPin } from '../src/evidence/keys.js';
import { verifyEvidenceFile } from '../src/evidence/files.js';
import { capture } from './helpers/capture.js';
import { corpusFiles, judged, liveEvidence, type CorpusEntry, type Verdict } from './helpers/evidence.js';

const { packets, mutations, entries, noAnchor } = liveEvidence();

// Verdicts counted only once they agreed, so the summary line can never claim more than was checked.
const agreed = { core: 0, file: 0 };
const expected = { core: entries.length * 2 + packets.length, file: entries.length * 2 + packets.length };
afterAll(() => {
  const all = agreed.core === expected.core && agreed.file === expected.file;
  console.log(
    `corpus evidence: ${packets.length} packets, ${mutations.length} mutations; verdicts agreeing with the real verifier: ` +
      `core ${agreed.core}/${expected.core}, verify-evidence in-process ${agreed.file}/${expected.file}${all ? ' — all agree' : ''}`,
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

// What the command runs for each file (src/commands/evidence.ts → verifyEvidenceFile), in-process for every case: the
// binary was once spawned per packet and mutation (77 runs) only to reach these same verdicts. Its own contract (exit
// 0 or 8, the document, exit 2 without an anchor) is proven on a representative set in the .cli twin.
describe('verify-evidence (in-process) reaches the real verdict', () => {
  const files = corpusFiles(mkdtempSync(path.join(tmpdir(), 'loopsign-corpus-evidence-')), packets);

  async function judge(e: CorpusEntry, trust: { publicKey: string; keyId?: string }): Promise<Verdict> {
    const { kind, result } = await verifyEvidenceFile(files.fileOf(e), undefined, trust);
    expect(kind, e.id).toBe('packet');
    return result as Verdict;
  }

  it(`every packet and mutation, with a pin file and the key id (${entries.length} files)`, async () => {
    for (const e of entries) {
      const v = await judge(e, { publicKey: files.pinOf(e), keyId: e.keyId });
      expect(judged(v), e.id).toEqual(judged(e.verdict));
      if (e.verdict.packetDigest) expect(v.packetDigest, e.id).toBe(e.verdict.packetDigest);
      // Also in the summary after the whole run.
      capture.count(
        packets.includes(e)
          ? 'live corpus: evidence packets judged as the real verifier does'
          : 'live corpus: evidence mutations judged as the real verifier does',
        e.id,
      );
      agreed.file++;
    }
  });

  it(`every packet and mutation, with the pin alone: the key id derives from the pin (${entries.length} files)`, async () => {
    for (const e of entries) {
      expect(judged(await judge(e, { publicKey: e.pin })), e.id).toEqual(judged(e.verdict));
      agreed.file++;
    }
  });

  it('with no trust anchor: refused before verifying (exit 2, missing_trust_anchor), as the real verifier names it', async () => {
    for (const e of packets) {
      expect(noAnchor.get(e.id)!.errors).toEqual(['missing_trust_anchor']);
      await expect(verifyEvidenceFile(files.fileOf(e), undefined, {})).rejects.toMatchObject({
        code: 'missing_trust_anchor',
        exitCode: 2,
      });
      agreed.file++;
    }
  });
});
