// The streamed, multi-threaded audit verifier against the reference (the whole export parsed on one thread by
// parseStrictJson and checked by verifyAuditExport), on the same files: every break — in each batch, at batch
// boundaries, at the first and last event — every export-level failure and every strict-JSON refusal must come out
// identical, whether the events array was cut by guessing or exactly, in chunks of any size. The same cases run twice:
// in-process on src/ with every batch checked on the calling thread (test/audit-stream.test.ts, the unit layer), and on
// the build with worker threads (test/audit-stream.cli.test.ts): a worker loads dist/evidence/audit-worker.cjs, which
// only the build has. The reference is always the sources' (it is the oracle, not what is tested).
import { afterAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { GENESIS_DIGEST, verifyAuditExport } from '../../src/evidence/audit.js';
import { parseStrictJson } from '../../src/evidence/strict-json.js';
import type { StreamOptions, StreamedAudit } from '../../src/evidence/audit-stream.js';
import { specDigest } from './audit.js';
import { assertAsyncProperty } from './property.js';

/** verifyAuditFile, from src/ or from build/. */
export type VerifyAuditFile = (file: string, options: StreamOptions) => Promise<StreamedAudit>;

/** An event whose strings exercise the cutter: escapes, backslashes before quotes, `},{` inside a string, non-ASCII. */
export function event(i: number, previous: string, extra: Record<string, unknown> = {}): any {
  const e: any = {
    event_id: `evt_${i}`,
    workspace_id: 'ws_1',
    sequence: i,
    previous_digest: previous,
    home_region: 'eu',
    actor_kind: 'agent',
    actor_reference: i % 4 === 0 ? 'wallet:0xabc\\' : 'wallet:0xabc',
    assurance_method: 'wallet_signature',
    action: i % 2 ? 'ask.create' : 'ask.confirm',
    target_kind: 'ask',
    target_id: `op_${i}`,
    purpose: 'paid_feedback',
    reason: i % 3 ? 'ok "quoted" },{ x' : 'kept',
    request_correlation: null,
    result: 'success',
    metadata_json: JSON.stringify({ Amount: String(i), list: [{ a: 1 }, { b: '},{"' }], é: 'ü', n: i }),
    occurred_at: new Date(1_700_000_000_000 + i * 1000).toISOString(),
    ...extra,
  };
  return e;
}

/** A valid export of n events; `tamper` changes it (events, or the whole document) afterwards. */
export function exportOf(n: number, options: { camel?: boolean; reasons?: (i: number) => string | null } = {}): any {
  let previous = GENESIS_DIGEST;
  const events: any[] = [];
  for (let i = 1; i <= n; i++) {
    const e = event(i, previous, options.reasons ? { reason: options.reasons(i) } : {});
    e.event_digest = specDigest(previous, e);
    previous = e.event_digest;
    if (options.camel) {
      // camelCase rows carry their metadata as an object (`metadata`), as the service's checker reads them.
      e.metadata = JSON.parse(e.metadata_json);
      delete e.metadata_json;
      for (const k of Object.keys(e)) if (k.includes('_')) (e[k.replace(/_([a-z])/g, (_m, c) => c.toUpperCase())] = e[k]), delete e[k];
    }
    events.push(e);
  }
  return {
    exportedAt: '2026-01-01T00:00:00.000Z',
    format: 'rateloop-audit-v1',
    integrity: { eventCount: n, headDigest: previous, valid: true },
    events,
    retention: { months: 6 },
    workspaceId: 'ws_1',
  };
}

/** The reference's answer for a file's text: its result, or why it is not usable JSON. */
export function reference(text: string, expectedHead?: string): { result?: unknown; jsonError?: string } {
  let doc: unknown;
  try {
    doc = parseStrictJson(text);
  } catch (error) {
    return { jsonError: (error as Error).message };
  }
  return { result: verifyAuditExport(doc, expectedHead) };
}

// About three events per batch: 24 events make eight batches, dealt to two workers in turn.
export const EVENT_BYTES = JSON.stringify(event(10, GENESIS_DIGEST, { event_digest: GENESIS_DIGEST })).length;
export const SMALL = { batchBytes: EVENT_BYTES * 2 + 10 };
// Batches of about six events, checked in parts of about two (checkBatch), so that breaks fall at the seams of parts.
export const PARTS = { batchBytes: EVENT_BYTES * 5 + 10, partBytes: EVENT_BYTES };

/** Files written under one folder (removed after the test file), and the streamed verifier's answer for them. */
export function streamKit(verifyAuditFile: VerifyAuditFile) {
  const dir = mkdtempSync(path.join(tmpdir(), 'loopsign-audit-stream-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  let files = 0;

  function fileOf(text: string): string {
    const file = path.join(dir, `export-${files++}.json`);
    writeFileSync(file, text);
    return file;
  }

  async function streamed(file: string, options: StreamOptions): Promise<{ result?: unknown; jsonError?: string; recut: boolean }> {
    const s = await verifyAuditFile(file, options);
    return { ...(s.jsonError !== undefined ? { jsonError: s.jsonError } : { result: s.result }), recut: s.recut };
  }

  /** Every way of reading `text` agrees with the reference; returns the reference's answer. */
  async function agree(text: string, ways: StreamOptions[], expectedHead?: string) {
    const ref = reference(text, expectedHead);
    const file = fileOf(text);
    for (const way of ways) {
      const { recut: _recut, ...got } = await streamed(file, { ...way, expectedHead });
      expect(got, JSON.stringify(way)).toEqual(ref);
    }
    return ref;
  }

  return { dir, fileOf, streamed, agree };
}
export type StreamKit = ReturnType<typeof streamKit>;

/**
 * The ways of reading a file that the cases use: `everyEvent` for a break at every event, `all` for everything else,
 * `first` for the pretty-printed and expected-head readings; `many` and `one` the worker threads of the two readings
 * of the recut case (in-process 0, this thread; on the build 2 and 1).
 */
export interface Ways {
  everyEvent: StreamOptions[];
  first: StreamOptions;
  all: StreamOptions[];
  many: number;
  one: number;
}

export const TAMPERS: [string, (d: any, k: number) => void][] = [
  ['a changed field', (d, k) => (d.events[k].result = 'failure')],
  ['a wrong sequence', (d, k) => (d.events[k].sequence = 99)],
  ['a sequence as text', (d, k) => (d.events[k].sequence = String(k + 1))],
  ['a dropped event', (d, k) => d.events.splice(k, 1)],
  ['another workspace', (d, k) => (d.events[k].workspace_id = 'ws_2')],
  ['a wrong previous digest', (d, k) => (d.events[k].previous_digest = GENESIS_DIGEST.replace(/0$/, '1'))],
  ['a null event', (d, k) => (d.events[k] = null)],
  ['metadata that is not JSON', (d, k) => (d.events[k].metadata_json = '{"a":')],
  ['a date that is not one', (d, k) => (d.events[k].occurred_at = 'yesterday')],
  [
    'the service checker\'s "null" form',
    (d, k) => {
      const e = d.events[k];
      e.reason = null;
      e.event_digest = specDigest(e.previous_digest, e, 'string');
    },
  ],
];

/** An export of no events whose events array holds `inside` between its brackets. */
export const emptyExport = (inside: string) =>
  JSON.stringify({
    format: 'rateloop-audit-v1',
    workspaceId: 'ws_1',
    integrity: { eventCount: 0, headDigest: GENESIS_DIGEST, valid: true },
    events: [],
  }).replace('"events":[]', `"events":[${inside}]`);

/** The cases every reading must agree with the reference on: breaks, export-level results, strict JSON, control characters. */
export function agreementSuites(kit: StreamKit, ways: Ways): void {
  const { fileOf, streamed, agree } = kit;

  describe('a break anywhere is reported as the reference reports it', () => {
    const N = 24;
    it.each(TAMPERS)(
      `%s, at every event (first, last, both sides of every batch boundary${ways.many ? ', every worker' : ''})`,
      async (_name, tamper) => {
        for (let k = 0; k < N; k++) {
          const d = exportOf(N);
          tamper(d, k);
          const ref = await agree(JSON.stringify(d), ways.everyEvent);
          expect(ref.result).toMatchObject({ valid: false });
        }
      },
    );

    // The ways the test above reads at every event already read these five.
    const others = ways.all.filter((way) => !ways.everyEvent.includes(way));
    it.each(TAMPERS)('%s, in every way of reading: guessed or exact cuts, tiny chunks, pretty-printed', async (_name, tamper) => {
      for (const k of [0, 5, 6, 7, 23]) {
        const d = exportOf(N);
        tamper(d, k);
        await agree(JSON.stringify(d), others);
        await agree(JSON.stringify(d, null, 2), [ways.first]);
      }
    });

    it('two breaks in different batches: the earlier one, even when its batch finishes last', async () => {
      const d = exportOf(N);
      d.events[20].result = 'failure';
      d.events[4].workspace_id = 'ws_2';
      const ref = await agree(JSON.stringify(d), ways.all);
      expect(ref.result).toMatchObject({ errors: ['workspace_mismatch'], sequence: 5 });
    });
  });

  describe("export-level results are the reference's", () => {
    const cases: [string, (d: any) => unknown][] = [
      ['a valid chain', (d) => d],
      ['camelCase columns', () => exportOf(24, { camel: true })],
      [
        'null columns refused from the first such event, in a later batch',
        () => exportOf(24, { reasons: (i) => (i >= 14 ? null : 'kept') }),
      ],
      ['another workspace for the whole export', (d) => ({ ...d, workspaceId: 'ws_2' })],
      ['no workspace', (d) => ({ ...d, workspaceId: undefined })],
      ['another format', (d) => ({ ...d, format: 'rateloop-audit-v2' })],
      ['a wrong head', (d) => ({ ...d, integrity: { ...d.integrity, headDigest: GENESIS_DIGEST } })],
      ['a wrong count', (d) => ({ ...d, integrity: { ...d.integrity, eventCount: 3 } })],
      ['integrity not flagged valid', (d) => ({ ...d, integrity: { ...d.integrity, valid: false } })],
      ['no events', (d) => ({ ...d, events: [], integrity: { eventCount: 0, headDigest: GENESIS_DIGEST, valid: true } })],
      ['events that are not an array', (d) => ({ ...d, events: { 0: d.events[0] } })],
      ['events that are not objects', (d) => ({ ...d, events: [1, 2, 3] })],
      ['events first, fields after', (d) => ({ events: d.events, workspaceId: d.workspaceId, integrity: d.integrity, format: d.format })],
      ['a __proto__ field', (d) => JSON.parse(JSON.stringify(d).replace('"retention"', '"__proto__"'))],
    ];
    it.each(cases)('%s', async (_name, make) => {
      const text = JSON.stringify(make(exportOf(24)));
      await agree(text, ways.all);
      await agree(text, [ways.first], `sha256:${'1'.repeat(64)}`);
    });

    it('an expected head that matches', async () => {
      const d = exportOf(24);
      const ref = await agree(JSON.stringify(d), ways.all, d.integrity.headDigest);
      expect(ref.result).toMatchObject({ valid: true, errors: [] });
    });

    it('a chain whose strings end in `},{` is recut exactly, with the same result; ordinary ones are not', async () => {
      const plain = fileOf(JSON.stringify(exportOf(24)));
      expect(await streamed(plain, { workers: ways.many, ...SMALL })).toMatchObject({ recut: false, result: { valid: true } });
      // Read a few bytes at a time, every seam between two events straddles chunks somewhere, and is still found.
      for (const chunkBytes of [1, 2, 3, 7])
        expect(await streamed(plain, { workers: ways.one, ...SMALL, chunkBytes })).toMatchObject({ recut: false, result: { valid: true } });
      const d = exportOf(24);
      for (const e of d.events) e.extra = '},{';
      const text = JSON.stringify(d);
      const ref = await agree(text, ways.all);
      expect(ref.result).toMatchObject({ valid: true });
      expect(await streamed(fileOf(text), { workers: ways.many, ...SMALL })).toMatchObject({ recut: true });
    });
  });

  describe('strict JSON: the same refusal, with the same reason', () => {
    const base = () => JSON.stringify(exportOf(24));
    const nth = (text: string, needle: string, n: number) => {
      let at = -1;
      for (let k = 0; k <= n; k++) at = text.indexOf(needle, at + 1);
      return at;
    };
    const insertAt = (text: string, at: number, what: string) => text.slice(0, at) + what + text.slice(at);
    const cases: [string, () => string][] = [
      [
        'a duplicate key in an event of a later batch',
        () => {
          const t = base();
          return insertAt(t, nth(t, '"result":', 13), '"result":"x",');
        },
      ],
      ['a duplicate top-level key', () => base().replace('"retention"', '"format"')],
      ['a duplicate "events"', () => base().replace('"retention":{"months":6}', '"events":[]')],
      [
        'nesting deeper than 200 levels inside an event',
        () => {
          const t = base();
          return insertAt(t, nth(t, '"result":', 9), `"deep":${'['.repeat(198)}${']'.repeat(198)},`);
        },
      ],
      [
        'nesting just within the limit',
        () => {
          const t = base();
          return insertAt(t, nth(t, '"result":', 9), `"deep":${'['.repeat(197)}${']'.repeat(197)},`);
        },
      ],
      [
        'a number out of range',
        () => {
          const t = base();
          return insertAt(t, nth(t, '"result":', 17), '"big":1e400,');
        },
      ],
      [
        'a key that is not a string',
        () => {
          const t = base();
          return insertAt(t, nth(t, '"result":', 3), '"\\x":1,');
        },
      ],
      [
        'far more arrays than evidence has',
        () =>
          JSON.stringify({
            format: 'rateloop-audit-v1',
            integrity: {},
            events: Array.from({ length: 30_000 }, () => []),
            workspaceId: 'ws_1',
          }),
      ],
      [
        'too many arrays, and a duplicate key after the budget ran out',
        () =>
          JSON.stringify({
            format: 'rateloop-audit-v1',
            integrity: {},
            events: Array.from({ length: 30_000 }, () => []),
            workspaceId: 'ws_1',
          }).replace('"workspaceId"', '"integrity":1,"workspaceId"'),
      ],
      [
        'a duplicate key before the budget runs out',
        () =>
          JSON.stringify({
            format: 'rateloop-audit-v1',
            integrity: {},
            events: [{ a: 1 }, ...Array.from({ length: 30_000 }, () => [])],
            workspaceId: 'ws_1',
          }).replace('{"a":1}', '{"a":1,"a":2}'),
      ],
    ];
    it.each(cases)('%s', async (_name, make) => {
      await agree(make(), ways.all);
    });

    it.each([
      ['a missing colon inside an event', (t: string) => t.replace('"result":"success"', '"result" "success"')],
      ['a trailing comma in the events', (t: string) => t.replace('}],"retention"', '},],"retention"')],
      ['an empty element', (t: string) => t.replace('},{"event_id":"evt_5"', '},,{"event_id":"evt_5"')],
      ['the events closed by a brace', (t: string) => t.replace('}],"retention"', '}},"retention"')],
      ['a file cut short', (t: string) => t.slice(0, t.length - 40)],
      ['something after the object', (t: string) => `${t} x`],
      ['a byte order mark', (t: string) => `\ufeff${t}`],
    ])("not JSON at all (%s): refused by both, the reason in the streamed path's own words", async (_name, change) => {
      const text = change(JSON.stringify(exportOf(24)));
      expect(text).not.toBe(JSON.stringify(exportOf(24)));
      expect(reference(text).jsonError).toBeDefined();
      const file = fileOf(text);
      for (const way of ways.all) expect((await streamed(file, way)).jsonError, JSON.stringify(way)).toEqual(expect.any(String));
    });
  });

  describe('red team: an events array of control characters is not an empty one', () => {
    // JSON's white space is space, tab, CR and LF only; `[\x01]` is no array at all. The exact cutter once took any
    // byte up to 0x20 for white space, so such an "empty" chain verified (valid: true) where the reference refuses it.
    const empty = emptyExport;

    it.each(['\x01', '\x00', '\x0b', '\f', ' \x1f\n', '\t\x7f'])('%j between the brackets: refused by both', async (inside) => {
      expect(reference(empty(' ')).result).toMatchObject({ valid: true }); // the same file with real white space verifies
      const text = empty(inside);
      expect(reference(text).jsonError).toBeDefined();
      const file = fileOf(text);
      for (const way of ways.all) expect(await streamed(file, way), JSON.stringify(way)).toMatchObject({ jsonError: expect.any(String) });
    });
  });
}

// What strings are made of: seams, escapes, quotes and multi-byte characters, so that guessed cuts fall inside them.
const FRAGMENTS = ['},{"', '},{', '}, {"', '} ,{"', '\\', '\\"', '"', 'é', '😀', ']', '[', '{', '}', ',', ' ', '\n', 'x', '\u2028'];
const text = fc.array(fc.constantFrom(...FRAGMENTS), { maxLength: 4 }).map((a) => a.join(''));
const eventShape = fc.record({
  actor: text,
  // A null reason or target is refused (malformed_field): one in ten, so that whole chains still verify often.
  reason: fc.option(text, { nil: null, freq: 10 }),
  meta: fc.tuple(text, text),
  nested: fc.option(fc.tuple(text, text), { nil: undefined }),
  nullTarget: fc.nat(9).map((n) => n === 0),
});
const space = fc.constantFrom('', '', ' ', '\n', '\t', '\r\n');
const INSERTS = [
  '},{"',
  '}',
  '{',
  ',',
  '"',
  '\\',
  ']',
  '[',
  ' ',
  '\x01',
  'é',
  '\\ud800',
  '1e400',
  '"result":"x",',
  '"sequence":1,',
  'null',
];
const mutation = fc.record({
  kind: fc.constantFrom('insert', 'delete', 'copy'),
  at: fc.nat(),
  what: fc.constantFrom(...INSERTS),
  span: fc.nat(20),
  from: fc.nat(),
});
const wayWith = (workers: number[]) =>
  fc.record({
    workers: fc.constantFrom(...workers),
    batchBytes: fc.integer({ min: 1, max: 1500 }),
    partBytes: fc.integer({ min: 1, max: 600 }),
    chunkBytes: fc.integer({ min: 1, max: 400 }),
    exact: fc.boolean(),
  });
const strict = fc.record({
  duplicateAt: fc.option(fc.nat(), { nil: undefined }),
  deepAt: fc.option(fc.tuple(fc.nat(), fc.integer({ min: 196, max: 201 })), { nil: undefined }),
  hugeAt: fc.option(fc.nat(), { nil: undefined }),
  surrogateAt: fc.option(fc.nat(), { nil: undefined }),
});

export function chain(
  shapes: { actor: string; reason: string | null; meta: [string, string]; nested?: [string, string]; nullTarget: boolean }[],
  workspaceFrom: number,
): any {
  const d = exportOf(shapes.length);
  let previous = GENESIS_DIGEST;
  d.events.forEach((e: any, k: number) => {
    const s = shapes[k]!;
    Object.assign(e, {
      actor_reference: s.actor,
      reason: s.reason,
      target_id: s.nullTarget ? null : e.target_id,
      metadata_json: JSON.stringify({ list: [{ a: s.meta[0] }, { b: s.meta[1] }] }),
      workspace_id: k + 1 >= workspaceFrom ? 'ws_2' : 'ws_1',
    });
    if (s.nested) e.nested = [{ x: s.nested[0] }, { y: [{ z: 1 }, { w: s.nested[1] }] }];
    e.previous_digest = previous;
    previous = e.event_digest = specDigest(previous, e);
  });
  d.integrity = { eventCount: shapes.length, headDigest: previous, valid: true };
  return d;
}

/** JSON text with the given white space between tokens (one of them, maybe, a byte that only looks like it), and strict-JSON traps at the n-th object, number or string met. */
export function write(v: unknown, spaces: string[], traps: fc.RecordValue<any> & { oddSpaceAt?: [number, string] }): string {
  let s = 0;
  let objects = 0;
  let numbers = 0;
  let strings = 0;
  const w = () => {
    const k = s++;
    return traps.oddSpaceAt?.[0] === k ? traps.oddSpaceAt[1] : spaces[k % spaces.length]!;
  };
  const go = (x: unknown): string => {
    if (Array.isArray(x)) return `[${w()}${x.map(go).join(`${w()},${w()}`)}${w()}]`;
    if (x !== null && typeof x === 'object') {
      const o = objects++;
      const members = Object.entries(x).map(([k, y]) => `${JSON.stringify(k)}${w()}:${w()}${go(y)}`);
      if (traps.duplicateAt === o && members.length) members.push(members[0]!);
      if (traps.deepAt?.[0] === o) members.unshift(`"deep":${'['.repeat(traps.deepAt[1])}${']'.repeat(traps.deepAt[1])}`);
      return `{${w()}${members.join(`${w()},${w()}`)}${w()}}`;
    }
    if (typeof x === 'number' && traps.hugeAt === numbers++) return '1e400';
    if (typeof x === 'string' && traps.surrogateAt === strings++) return `${JSON.stringify(x).slice(0, -1)}\\ud800"`;
    return JSON.stringify(x);
  };
  return go(v);
}

export function mutate(t: string, mutations: fc.RecordValue<any>[]): string {
  for (const m of mutations) {
    const at = m.at % (t.length + 1);
    if (m.kind === 'insert') t = t.slice(0, at) + m.what + t.slice(at);
    else if (m.kind === 'delete') t = t.slice(0, at) + t.slice(at + 1 + m.span);
    else t = t.slice(0, at) + t.slice(m.from % (t.length + 1)).slice(0, m.span) + t.slice(at);
  }
  return t;
}

/** The streamed verdict is the reference's for the file as written; returns the kind of verdict. */
export async function sameVerdict(streamed: StreamKit['streamed'], file: string, options: StreamOptions): Promise<string> {
  // The file's own text: a mutation may split a surrogate pair, which is written out as U+FFFD.
  const onDisk = readFileSync(file, 'utf8');
  const ref = reference(onDisk);
  const { recut: _recut, ...got } = await streamed(file, options);
  let syntax = false;
  try {
    JSON.parse(onDisk);
  } catch {
    syntax = true;
  }
  // Not JSON at all: refused, in the streamed path's own words. Otherwise: the very same answer.
  if (ref.jsonError !== undefined && syntax) expect(got, JSON.stringify(options)).toMatchObject({ jsonError: expect.any(String) });
  else expect(got, JSON.stringify(options)).toEqual(ref);
  if (ref.jsonError !== undefined) return syntax ? 'not JSON' : 'strict';
  const result = ref.result as { valid: boolean; errors: string[] };
  return result.valid ? 'valid' : result.errors[0]!;
}

/** Random exports, mutated at random, read in random ways (with these worker counts): the streamed verdict is the reference's. Returns how many of each kind of verdict it saw. */
export async function verdictProperty(
  kit: StreamKit,
  { workers, runs }: { workers: number[]; runs: number },
): Promise<{ runs: number; seen: Record<string, number> }> {
  const way = wayWith(workers);
  let ran = 0;
  const seen: Record<string, number> = {};
  await assertAsyncProperty(
    fc.asyncProperty(
      fc.oneof({ weight: 1, arbitrary: fc.constant([]) }, { weight: 5, arbitrary: fc.array(eventShape, { minLength: 1, maxLength: 7 }) }),
      fc.nat(9),
      fc.boolean(),
      fc.option(fc.tuple(fc.nat(TAMPERS.length - 1), fc.nat()), { nil: undefined }),
      fc.oneof(fc.constant('compact'), fc.constant('indented'), fc.array(space, { minLength: 1, maxLength: 64 })),
      strict,
      fc.oneof(fc.constant([]), fc.array(mutation, { minLength: 1, maxLength: 2 })),
      way,
      async (shapes, workspaceFrom, camel, tamper, style, traps, mutations, options) => {
        const d = chain(shapes, workspaceFrom || Infinity);
        if (tamper && shapes.length > 0) TAMPERS[tamper[0]]![1](d, tamper[1] % shapes.length);
        if (camel)
          for (const e of d.events)
            if (e && typeof e === 'object')
              for (const k of Object.keys(e))
                if (k.includes('_')) (e[k.replace(/_([a-z])/g, (_m, c) => c.toUpperCase())] = e[k]), delete e[k];
        const written =
          style === 'compact' ? JSON.stringify(d) : style === 'indented' ? JSON.stringify(d, null, 2) : write(d, style, traps);
        const kind = await sameVerdict(kit.streamed, kit.fileOf(mutate(written, mutations)), options);
        seen[kind] = (seen[kind] ?? 0) + 1;
        ran++;
      },
    ),
    { numRuns: runs },
  );
  return { runs: ran, seen };
}
