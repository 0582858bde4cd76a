// Issue 39: loopsign's verify-evidence against the service's own offline verifiers, case by case, on the
// differential corpus (test/fixtures/evidence-differential/: packets and audit exports made by
// scripts/evidence-corpus.mjs, and the verdicts the service's verifier scripts gave on each, recorded outside this
// repository). Never a false ok; every disagreement one of loopsign's own listed refusals (docs/evidence.md,
// "Deliberate refusals"); otherwise the same codes. One test per class of the corpus.
import { afterAll, describe, expect, it } from 'vitest';
import { compare, differentialCorpus, judgeWithLoopsign, type Agreement } from './helpers/evidence-differential.js';

const { cases, verdicts } = differentialCorpus();
const classes = [...new Set(cases.map((c) => c.class))];
const tally: Record<string, Record<Agreement, number>> = {};

afterAll(() => {
  const total: Record<Agreement, number> = { agree: 0, 'false-ok': 0, deliberate: 0, 'code-difference': 0 };
  for (const [cls, t] of Object.entries(tally)) {
    for (const k of Object.keys(total) as Agreement[]) total[k] += t[k];
    console.log(
      `${cls}: ${Object.entries(t)
        .map(([k, n]) => `${k} ${n}`)
        .join(', ')}`,
    );
  }
  console.log(
    `evidence differential: ${cases.length} cases; ${Object.entries(total)
      .map(([k, n]) => `${k} ${n}`)
      .join(', ')}`,
  );
});

describe('the differential corpus', () => {
  it('has a recorded verdict for every case, and every class of issue 39', () => {
    expect(cases.length).toBeGreaterThan(9000);
    for (const c of cases) expect(verdicts[c.id], c.id).toBeDefined();
    for (const cls of [
      'valid',
      'signature-shape',
      'leaves-shape',
      'undefined-in-canonical',
      'locale-ties',
      'algorithm-confusion',
      'keys-and-pins',
      'pass-rule',
      'regexp-stringify',
      'audience-absent',
      'text',
      'structured',
      'audit-camel-beside-snake',
      'audit-column-type',
      'audit-metadata',
      'audit-null-columns',
      'audit-string-form',
    ])
      expect(classes, cls).toContain(cls);
    // Every valid packet and export is valid for the service too: the generator makes what the service signs.
    for (const c of cases.filter((x) => x.class === 'valid' || x.class === 'audit-valid')) expect(verdicts[c.id]!.valid, c.id).toBe(true);
  });
});

describe('loopsign never says valid where the service does not, and differs only by its own listed refusals', () => {
  it.each(classes)('%s', async (cls) => {
    const found: Record<Agreement, string[]> = { agree: [], 'false-ok': [], deliberate: [], 'code-difference': [] };
    for (const c of cases.filter((x) => x.class === cls)) {
      const service = verdicts[c.id]!;
      const loopsign = await judgeWithLoopsign(c);
      const said = (v: typeof service) =>
        v.valid ? 'ok' : v.unparsed ? 'unparsed' : `${v.usage ? `usage ${v.usage} ` : ''}${v.errors.join(',')}`;
      found[compare(service, loopsign)].push(`${c.id}: service ${said(service)}, loopsign ${said(loopsign)}`);
    }
    tally[cls] = Object.fromEntries(Object.entries(found).map(([k, v]) => [k, v.length])) as Record<Agreement, number>;
    expect(found['false-ok']).toEqual([]);
    expect(found['code-difference']).toEqual([]);
  });
});
