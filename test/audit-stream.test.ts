// The streamed audit verifier (src/evidence/audit-stream.ts) against the reference, in-process and without a build:
// every batch is checked on this thread (workers: 0 — still read in chunks, cut into batches, checked in parts and
// joined as with workers). The cases are test/helpers/audit-stream.ts's; they run again on the build with worker
// threads, with the command on large files, in test/audit-stream.cli.test.ts.
// The property is bounded by case count, not time: LOOPSIGN_PROPERTY_RUNS=N runs N cases (default 500, about
// a second here);
// a failure prints the command that replays it (test/helpers/property.ts).
import { describe, expect, it } from 'vitest';
import { verifyAuditFile } from '../src/evidence/audit-stream.js';
import { checkBatch } from '../src/evidence/audit-batch.js';
import { checkRun, GENESIS_DIGEST } from '../src/evidence/audit.js';
import { scanJson } from '../src/evidence/strict-json.js';
import { specDigest } from './helpers/audit.js';
import {
  agreementSuites,
  chain,
  EVENT_BYTES,
  exportOf,
  PARTS,
  SMALL,
  sameVerdict,
  streamKit,
  verdictProperty,
  write,
} from './helpers/audit-stream.js';
import { replaying } from './helpers/property.js';

// The rarest kinds of verdict the property must see come up in about 3 of 100 cases: with 500 cases, one of them is
// missed about once in a million runs.
const DEFAULT_RUNS = 500;
const RUNS = Math.max(1, Number(process.env.LOOPSIGN_PROPERTY_RUNS ?? DEFAULT_RUNS));

const kit = streamKit(verifyAuditFile);
// The ways of reading that the build runs with worker threads, each on this thread here; and the exact cut. Chunks of
// 61 bytes instead of the build's 7: every event (some 700 bytes) still straddles a dozen of them, at a ninth of the
// reads (7-byte chunks were the one slow way on this thread); the property reads in chunks of 1 to 400 bytes.
const here = { workers: 0 };
const small = { ...here, ...SMALL };
const parts = { ...here, ...PARTS };
agreementSuites(kit, {
  everyEvent: [small, parts],
  first: small,
  all: [small, parts, { ...here, ...SMALL, exact: true }, { ...here, ...SMALL, chunkBytes: 61 }],
  many: 0,
  one: 0,
});

describe('a batch is checked in parts, and whole when a part is not plain', () => {
  // What checking the batch whole finds: the reference's scan, parse and run over all of its events.
  const whole = (events: unknown[], text: string) => ({
    chars: text.length,
    scan: { containers: scanJson(`[${text}]`, 1).containers - 1 },
    count: events.length,
    run: checkRun(events, 0, undefined, undefined),
  });
  const task = (text: string) => ({ bytes: new Uint8Array(Buffer.from(`[${text}]`)), start: 0, count: 0, partBytes: EVENT_BYTES });

  it('a valid run: several parts, the same report as checking it whole', () => {
    const events = exportOf(12, { reasons: (i) => (i >= 7 ? 'later' : 'kept') }).events;
    const text = events.map((e: unknown) => JSON.stringify(e)).join(',');
    const { parts, ...report } = checkBatch(task(text));
    expect(parts).toBeGreaterThanOrEqual(6);
    expect(report).toEqual(whole(events, text));
  });

  // Hashed again after the change, so that only the workspace is wrong: the batch reports it, the join judges it.
  const rechained = (events: any[]) => {
    let previous = GENESIS_DIGEST;
    for (const e of events) (e.previous_digest = previous), (previous = e.event_digest = specDigest(previous, e));
    return events;
  };

  it('another workspace at the first event of a part, or inside one: the same report as checking it whole', () => {
    for (const k of [1, 4, 9]) {
      const events = exportOf(12).events;
      events[k].workspace_id = 'ws_2';
      const text = rechained(events)
        .map((e: unknown) => JSON.stringify(e))
        .join(',');
      const { parts, ...report } = checkBatch(task(text));
      expect(parts).toBeGreaterThanOrEqual(6);
      expect(report).toEqual(whole(events, text));
      expect(report.run.otherWorkspaceAt).toBe(k);
    }
  });

  it('a broken link is checked whole, and reported as whole', () => {
    const d = exportOf(12);
    d.events[6].result = 'failure';
    const text = d.events.map((e: unknown) => JSON.stringify(e)).join(',');
    const report = checkBatch(task(text));
    expect(report.parts).toBeUndefined();
    expect(report).toEqual(whole(d.events, text));
  });
});

describe('red team: random exports, mutated at random, read in random ways (property-based)', () => {
  it('a byte that only looks like white space, in every place white space may be, is refused as the reference refuses it', async () => {
    for (const n of [0, 1, 3]) {
      const d = chain(
        Array.from({ length: n }, () => ({
          actor: '},{"',
          reason: 'kept',
          meta: ['é', '😀'] as [string, string],
          nested: ['x', '},{'] as [string, string],
          nullTarget: false,
        })),
        Infinity,
      );
      const plain = write(d, [' '], {});
      for (let at = 0; ; at++) {
        const odd = write(d, [' '], { oddSpaceAt: [at, '\x0b'] });
        if (odd === plain) break; // past the last place
        expect(
          await sameVerdict(kit.streamed, kit.fileOf(odd), {
            workers: 0,
            ...SMALL,
            partBytes: EVENT_BYTES,
            chunkBytes: 5 + (at % 50),
            exact: at % 2 === 0,
          }),
        ).toBe('not JSON');
      }
      expect(await sameVerdict(kit.streamed, kit.fileOf(plain), { workers: 0, ...SMALL })).toBe('valid');
    }
  });

  it("the streamed verdict is the reference's: the same result, the same strict refusal, and a refusal wherever the reference finds no JSON", async () => {
    const { runs, seen } = await verdictProperty(kit, { workers: [0], runs: RUNS });
    if (!replaying()) expect(runs).toBe(RUNS);
    // The property saw every kind of verdict, not only one (with fewer cases than the default, some may not come up).
    if (RUNS >= DEFAULT_RUNS && !replaying())
      for (const kind of ['valid', 'not JSON', 'strict', 'event_digest_mismatch', 'workspace_mismatch', 'previous_digest_mismatch'])
        expect(seen[kind], JSON.stringify(seen)).toBeGreaterThan(0);
  });
});
