// The live evidence corpus through the built binary: `verify-evidence` gives the real verifier's verdict with its
// contract — exit 0 and the result when valid, exit 8 with the codes in the error when not, exit 2 without a trust
// anchor. Every packet and mutation is judged in-process by the function the command runs
// (test/corpus-evidence.test.ts). Spawning the binary for each of them (77 runs) checked that function 77 times over;
// what only the binary adds (argv, exit code, document) is proven here on a representative set: every packet, and one
// mutation of each kind of verdict the corpus has.
import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { makeHome, runCli } from './helpers/cli.js';
import { corpusFiles, judged, liveEvidence, type CorpusEntry, type Verdict } from './helpers/evidence.js';

const { packets, mutations, noAnchor } = liveEvidence();
// One mutation per distinct set of error codes (of the first packet's mutations: the others repeat them).
const verdictKinds = [
  ...new Map(
    mutations.filter((m) => m.id.startsWith(`${packets[0]!.id}/`)).map((m) => [JSON.stringify(judged(m.verdict).errors), m]),
  ).values(),
];
const representative = [...packets, ...verdictKinds];

let agreed = 0;
const expected = representative.length + 2 + packets.length;
afterAll(() => {
  const line = `corpus evidence through the built binary: ${agreed}/${expected} verdicts agreeing with the real verifier (every packet, ${verdictKinds.length} kinds of mutation)`;
  console.log(line);
});

describe('the built binary reaches the real verdict', () => {
  const home = makeHome();
  const files = corpusFiles(mkdtempSync(path.join(tmpdir(), 'loopsign-corpus-evidence-')), packets);

  /** One run: exit 0 with the result when valid, exit 8 with the codes in the error when not. */
  async function judge(e: CorpusEntry, trust: string[]): Promise<Verdict> {
    const r = await runCli(['--json', 'verify-evidence', files.fileOf(e), ...trust], home);
    expect(r.code, `${e.id}: ${r.stdout}${r.stderr}`).toBe(e.verdict.valid ? 0 : 8);
    const doc = r.json();
    const result = r.code === 0 ? doc : doc.error;
    expect(doc.ok).toBe(r.code === 0);
    return { valid: result.valid, errors: result.errors, packetDigest: result.packetDigest };
  }

  it('the representative set covers a pass and a refusal, and more than one kind of refusal', () => {
    expect(packets.length).toBeGreaterThan(0);
    expect(verdictKinds.length).toBeGreaterThanOrEqual(5);
  });

  it(`every packet and one mutation of each kind, with --public-key and --key-id (${representative.length} runs)`, async () => {
    for (const e of representative) {
      const v = await judge(e, ['--public-key', files.pinOf(e), '--key-id', e.keyId]);
      expect(judged(v), e.id).toEqual(judged(e.verdict));
      if (e.verdict.packetDigest) expect(v.packetDigest, e.id).toBe(e.verdict.packetDigest);
      agreed++;
    }
  });

  it('a packet and a mutation with --public-key alone: the key id derives from the pin', async () => {
    const keyChanged = verdictKinds.find((m) => m.id.endsWith('/key-id-changed'))!;
    expect(keyChanged, 'the corpus has a key-id mutation').toBeDefined();
    for (const e of [packets[0]!, keyChanged]) {
      expect(judged(await judge(e, ['--public-key', e.pin])), e.id).toEqual(judged(e.verdict));
      agreed++;
    }
  });

  it('with no trust anchor: refused before verifying (exit 2, missing_trust_anchor), as the real verifier names it', async () => {
    for (const e of packets) {
      const r = await runCli(['--json', 'verify-evidence', files.fileOf(e)], home);
      expect(r.code).toBe(2);
      expect(noAnchor.get(e.id)!.errors).toEqual(['missing_trust_anchor']);
      expect(r.json().error.code).toBe('missing_trust_anchor');
      agreed++;
    }
  });
});
