// The streamed, multi-threaded audit verifier against the reference (the whole export parsed on one thread by
// parseStrictJson and checked by verifyAuditExport), on the same files: every break — in each worker's batch, at
// batch boundaries, at the first and last event — every export-level failure and every strict-JSON refusal must
// come out identical, whether the events array was cut by guessing or exactly, in chunks of any size.
// The streamed path runs worker threads, which load the built JavaScript: these tests import it from dist/.
import { afterAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { createWriteStream, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { makeHome, ROOT, runCli } from './helpers/cli.js';
import { specDigest } from './helpers/audit.js';

const dist = (m: string) => import(path.join(ROOT, 'dist', 'evidence', m));
const { verifyAuditFile } = await dist('audit-stream.js');
const { verifyAuditExport, GENESIS_DIGEST } = await dist('audit.js');
const { parseStrictJson } = await dist('strict-json.js');
const { STREAM_MIN_BYTES } = await dist('detect.js');
const { checkBatch } = await dist('audit-batch.js');
const { checkRun } = await dist('audit.js');
const { scanJson } = await dist('strict-json.js');

const dir = mkdtempSync(path.join(tmpdir(), 'loopsign-audit-stream-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** An event whose strings exercise the cutter: escapes, backslashes before quotes, `},{` inside a string, non-ASCII. */
function event(i: number, previous: string, extra: Record<string, unknown> = {}): any {
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
    reason: i % 3 ? 'ok "quoted" },{ x' : null,
    request_correlation: null,
    result: 'success',
    metadata_json: JSON.stringify({ Amount: String(i), list: [{ a: 1 }, { b: '},{"' }], é: 'ü', n: i }),
    occurred_at: new Date(1_700_000_000_000 + i * 1000).toISOString(),
    ...extra,
  };
  return e;
}

/** A valid export of n events; `tamper` changes it (events, or the whole document) afterwards. */
function exportOf(n: number, options: { camel?: boolean; reasons?: (i: number) => string | null } = {}): any {
  let previous = GENESIS_DIGEST;
  const events: any[] = [];
  for (let i = 1; i <= n; i++) {
    const e = event(i, previous, options.reasons ? { reason: options.reasons(i) } : {});
    e.event_digest = specDigest(previous, e);
    previous = e.event_digest;
    if (options.camel)
      for (const k of Object.keys(e)) if (k.includes('_')) (e[k.replace(/_([a-z])/g, (_m, c) => c.toUpperCase())] = e[k]), delete e[k];
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

let files = 0;
function fileOf(text: string): string {
  const file = path.join(dir, `export-${files++}.json`);
  writeFileSync(file, text);
  return file;
}

/** The reference's answer for a file's text: its result, or why it is not usable JSON. */
function reference(text: string, expectedHead?: string): { result?: unknown; jsonError?: string } {
  let doc: unknown;
  try {
    doc = parseStrictJson(text);
  } catch (error) {
    return { jsonError: (error as Error).message };
  }
  return { result: verifyAuditExport(doc, expectedHead) };
}

async function streamed(file: string, options: Record<string, unknown>): Promise<{ result?: unknown; jsonError?: string; recut: boolean }> {
  const s = await verifyAuditFile(file, options);
  return { ...(s.jsonError !== undefined ? { jsonError: s.jsonError } : { result: s.result }), recut: s.recut };
}

// About three events per batch: 24 events make eight batches, dealt to two workers in turn.
const EVENT_BYTES = JSON.stringify(event(10, GENESIS_DIGEST, { event_digest: GENESIS_DIGEST })).length;
const SMALL = { batchBytes: EVENT_BYTES * 2 + 10 };

/** Every way of reading `text` agrees with the reference; returns the reference's answer. */
async function agree(text: string, ways: Record<string, unknown>[], expectedHead?: string) {
  const ref = reference(text, expectedHead);
  const file = fileOf(text);
  for (const way of ways) {
    const { recut: _recut, ...got } = await streamed(file, { ...way, expectedHead });
    expect(got, JSON.stringify(way)).toEqual(ref);
  }
  return ref;
}

// Batches of about six events, checked in parts of about two (checkBatch), so that breaks fall at the seams of parts.
const PARTS = { workers: 2, batchBytes: EVENT_BYTES * 5 + 10, partBytes: EVENT_BYTES };

const WAYS = [{ workers: 2, ...SMALL }, PARTS, { workers: 0, ...SMALL, exact: true }, { workers: 1, ...SMALL, chunkBytes: 7 }];

const TAMPERS: [string, (d: any, k: number) => void][] = [
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

describe('a break anywhere is reported as the reference reports it', () => {
  const N = 24;
  it.each(TAMPERS)(
    '%s, at every event (first, last, both sides of every batch boundary, every worker)',
    async (_name, tamper) => {
      for (let k = 0; k < N; k++) {
        const d = exportOf(N);
        tamper(d, k);
        const ref = await agree(JSON.stringify(d), [WAYS[0]!, PARTS]);
        expect(ref.result).toMatchObject({ valid: false });
      }
    },
    120_000,
  );

  it('in every way of reading: guessed or exact cuts, tiny chunks, pretty-printed', async () => {
    for (const [, tamper] of TAMPERS) {
      for (const k of [0, 5, 6, 7, 23]) {
        const d = exportOf(N);
        tamper(d, k);
        await agree(JSON.stringify(d), WAYS);
        await agree(JSON.stringify(d, null, 2), [WAYS[0]!]);
      }
    }
  }, 120_000);

  it('two breaks in different batches: the earlier one, even when its batch finishes last', async () => {
    const d = exportOf(N);
    d.events[20].result = 'failure';
    d.events[4].workspace_id = 'ws_2';
    const ref = await agree(JSON.stringify(d), WAYS);
    expect(ref.result).toMatchObject({ errors: ['workspace_mismatch'], sequence: 5 });
  });
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
    const events = exportOf(12, { reasons: (i) => (i >= 7 ? null : 'kept') }).events;
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

describe("export-level results are the reference's", () => {
  const cases: [string, (d: any) => unknown][] = [
    ['a valid chain', (d) => d],
    ['camelCase columns', () => exportOf(24, { camel: true })],
    ['null columns noted from the first such event, in a later batch', () => exportOf(24, { reasons: (i) => (i >= 14 ? null : 'kept') })],
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
    await agree(text, WAYS);
    await agree(text, [WAYS[0]!], `sha256:${'1'.repeat(64)}`);
  });

  it('an expected head that matches', async () => {
    const d = exportOf(24);
    const ref = await agree(JSON.stringify(d), WAYS, d.integrity.headDigest);
    expect(ref.result).toMatchObject({ valid: true, errors: [] });
  });

  it('a chain whose strings end in `},{` is recut exactly, with the same result; ordinary ones are not', async () => {
    const plain = fileOf(JSON.stringify(exportOf(24)));
    expect(await streamed(plain, { workers: 2, ...SMALL })).toMatchObject({ recut: false, result: { valid: true } });
    // Read a few bytes at a time, every seam between two events straddles chunks somewhere, and is still found.
    for (const chunkBytes of [1, 2, 3, 7])
      expect(await streamed(plain, { workers: 1, ...SMALL, chunkBytes })).toMatchObject({ recut: false, result: { valid: true } });
    const d = exportOf(24);
    for (const e of d.events) e.extra = '},{';
    const text = JSON.stringify(d);
    const ref = await agree(text, WAYS);
    expect(ref.result).toMatchObject({ valid: true });
    expect(await streamed(fileOf(text), { workers: 2, ...SMALL })).toMatchObject({ recut: true });
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
    await agree(make(), WAYS);
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
    for (const way of WAYS) expect((await streamed(file, way)).jsonError, JSON.stringify(way)).toEqual(expect.any(String));
  });
});

describe('red team: an events array of control characters is not an empty one', () => {
  // JSON's white space is space, tab, CR and LF only; `[\x01]` is no array at all. The exact cutter once took any
  // byte up to 0x20 for white space, so such an "empty" chain verified (valid: true) where the reference refuses it.
  const empty = (inside: string) =>
    JSON.stringify({
      format: 'rateloop-audit-v1',
      workspaceId: 'ws_1',
      integrity: { eventCount: 0, headDigest: GENESIS_DIGEST, valid: true },
      events: [],
    }).replace('"events":[]', `"events":[${inside}]`);

  it.each(['\x01', '\x00', '\x0b', '\f', ' \x1f\n', '\t\x7f'])('%j between the brackets: refused by both', async (inside) => {
    expect(reference(empty(' ')).result).toMatchObject({ valid: true }); // the same file with real white space verifies
    const text = empty(inside);
    expect(reference(text).jsonError).toBeDefined();
    const file = fileOf(text);
    for (const way of WAYS) expect(await streamed(file, way), JSON.stringify(way)).toMatchObject({ jsonError: expect.any(String) });
  });

  it('through the built binary: a streamed file of that kind exits 2, not 0', async () => {
    // Padded with real white space to the size from which the command streams.
    const text = empty('\x01').replace('{', `{${' '.repeat(STREAM_MIN_BYTES)}`);
    const r = await runCli(['--json', 'verify-evidence', '--audit', fileOf(text)], makeHome());
    expect(r.code, r.stdout).toBe(2);
    expect(r.json().error).toMatchObject({ code: 'invalid_packet_shape', message: expect.stringMatching(/not usable JSON/) });
  }, 60_000);
});

describe('red team: random exports, mutated at random, read in random ways (property-based)', () => {
  // What strings are made of: seams, escapes, quotes and multi-byte characters, so that guessed cuts fall inside them.
  const FRAGMENTS = ['},{"', '},{', '}, {"', '} ,{"', '\\', '\\"', '"', 'é', '😀', ']', '[', '{', '}', ',', ' ', '\n', 'x', '\u2028'];
  const text = fc.array(fc.constantFrom(...FRAGMENTS), { maxLength: 4 }).map((a) => a.join(''));
  const eventShape = fc.record({
    actor: text,
    reason: fc.option(text, { nil: null }),
    meta: fc.tuple(text, text),
    nested: fc.option(fc.tuple(text, text), { nil: undefined }),
    nullTarget: fc.boolean(),
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
  const way = fc.record({
    workers: fc.constantFrom(0, 0, 0, 1),
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

  function chain(
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
  function write(v: unknown, spaces: string[], traps: fc.RecordValue<any> & { oddSpaceAt?: [number, string] }): string {
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

  function mutate(t: string, mutations: fc.RecordValue<any>[]): string {
    for (const m of mutations) {
      const at = m.at % (t.length + 1);
      if (m.kind === 'insert') t = t.slice(0, at) + m.what + t.slice(at);
      else if (m.kind === 'delete') t = t.slice(0, at) + t.slice(at + 1 + m.span);
      else t = t.slice(0, at) + t.slice(m.from % (t.length + 1)).slice(0, m.span) + t.slice(at);
    }
    return t;
  }

  /** The streamed verdict is the reference's for the file as written; returns the kind of verdict. */
  async function sameVerdict(file: string, options: Record<string, unknown>): Promise<string> {
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

  it('a byte that only looks like white space, in every place white space may be, is refused as the reference refuses it', async () => {
    for (const n of [0, 1, 3]) {
      const d = chain(
        Array.from({ length: n }, () => ({
          actor: '},{"',
          reason: null,
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
          await sameVerdict(fileOf(odd), { workers: 0, ...SMALL, partBytes: EVENT_BYTES, chunkBytes: 5 + (at % 50), exact: at % 2 === 0 }),
        ).toBe('not JSON');
      }
      expect(await sameVerdict(fileOf(plain), { workers: 0, ...SMALL })).toBe('valid');
    }
  }, 60_000);

  it("the streamed verdict is the reference's: the same result, the same strict refusal, and a refusal wherever the reference finds no JSON", async () => {
    let runs = 0;
    const seen: Record<string, number> = {};
    await fc.assert(
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
          const kind = await sameVerdict(fileOf(mutate(written, mutations)), options);
          seen[kind] = (seen[kind] ?? 0) + 1;
          runs++;
        },
      ),
      { numRuns: 1200 },
    );
    // The property saw every kind of verdict, not only one.
    expect(runs).toBe(1200);
    for (const kind of ['valid', 'not JSON', 'strict', 'event_digest_mismatch', 'workspace_mismatch', 'previous_digest_mismatch'])
      expect(seen[kind], JSON.stringify(seen)).toBeGreaterThan(0);
  }, 120_000);
});

describe('the command streams large audit exports', () => {
  const home = makeHome();

  /** Write an export of `count` events, each padded to about `pad` bytes, without holding it whole. */
  async function bigExport(name: string, count: number, pad: number, tamperAt?: number): Promise<{ file: string; head: string }> {
    const file = path.join(dir, name);
    const out = createWriteStream(file);
    out.write('{"format":"rateloop-audit-v1","workspaceId":"ws_1","events":[');
    let previous = GENESIS_DIGEST;
    for (let i = 1; i <= count; i++) {
      const e = event(i, previous, { metadata_json: JSON.stringify({ pad: 'p'.repeat(pad) }) });
      e.event_digest = specDigest(previous, e);
      previous = e.event_digest;
      if (i === tamperAt) e.result = 'failure';
      if (!out.write((i > 1 ? ',' : '') + JSON.stringify(e))) await new Promise((r) => out.once('drain', r));
    }
    out.end(`],"integrity":{"eventCount":${count},"headDigest":"${previous}","valid":true}}`);
    await new Promise((r) => out.on('finish', r));
    return { file, head: previous };
  }

  it("an export of STREAM_MIN_BYTES or more gives the reference's verdict through the built binary, valid or broken", async () => {
    const { file, head } = await bigExport('big.json', 3000, 6000);
    expect(statSync(file).size).toBeGreaterThanOrEqual(STREAM_MIN_BYTES);
    const ok = await runCli(['--json', 'verify-evidence', '--audit', file, '--expected-head', head], home);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.json()).toMatchObject({ kind: 'audit', valid: true, eventCount: 3000, headDigest: head });
    // Detected as an audit export from its first bytes, without --audit.
    expect((await runCli(['--json', 'verify-evidence', file], home)).json()).toMatchObject({ kind: 'audit', valid: true });

    const broken = await bigExport('broken.json', 3000, 6000, 2222);
    const bad = await runCli(['--json', 'verify-evidence', '--audit', broken.file], home);
    expect(bad.code, bad.stderr).toBe(8);
    const { readFileSync } = await import('node:fs');
    const ref = verifyAuditExport(JSON.parse(readFileSync(broken.file, 'utf8')));
    expect(ref).toMatchObject({ errors: ['event_digest_mismatch'], sequence: 2222 });
    expect(bad.json().error).toMatchObject({ code: 'evidence_invalid', ...ref });
    const text = await runCli(['verify-evidence', '--audit', broken.file], home);
    expect(text.stderr).toContain(`first broken link: event 2222 (${ref.detail})`);
  }, 120_000);

  it('an export larger than the whole-file cap of 128 MiB verifies with the heap capped at 128 MB', async () => {
    const { file, head } = await bigExport('huge.json', 36, 3_900_000);
    expect(statSync(file).size).toBeGreaterThan(128 * 1024 * 1024);
    const r = await runCli(['--json', 'verify-evidence', '--audit', file], home, { env: { NODE_OPTIONS: '--max-old-space-size=128' } });
    expect(r.code, r.stderr).toBe(0);
    expect(r.json()).toMatchObject({ valid: true, eventCount: 36, headDigest: head });
    rmSync(file);
  }, 180_000);

  it('an event or the other fields beyond their caps are refused (exit 2), not read whole', async () => {
    const { file } = await bigExport('fat-event.json', 5, 4_300_000);
    const r = await runCli(['--json', 'verify-evidence', '--audit', file], home);
    expect(r.code, r.stderr).toBe(2);
    expect(r.json().error).toMatchObject({ code: 'too_large', message: expect.stringMatching(/an event larger than 4194304 bytes/) });
    const fields = fileOf(`{"format":"rateloop-audit-v1","retention":"${'r'.repeat(17_000_000)}","events":[]}`);
    const f = await runCli(['--json', 'verify-evidence', '--audit', fields], home);
    expect(f.code, f.stderr).toBe(2);
    expect(f.json().error).toMatchObject({ code: 'too_large', message: expect.stringMatching(/outside its events array/) });
  }, 120_000);
});
