// The streamed audit verifier on the build, with worker threads: each thread loads dist/evidence/audit-worker.cjs,
// which only the build has, and batches are dealt to workers in turn and finish in any order. The cases are
// test/helpers/audit-stream.ts's, read here in the ways that use workers (each also runs on the calling thread, with
// the exact cut, in-process in test/audit-stream.test.ts); then the command itself on files beyond the cutter's
// threshold, the whole-file cap and a 128 MB heap.
// The property is bounded by case count, not time: LOOPSIGN_PROPERTY_RUNS=N runs N cases (default 50: each starts
// its workers); a failure prints the command that replays it (test/helpers/property.ts).
import { describe, expect, it } from 'vitest';
import { createWriteStream, readFileSync, rmSync, statSync } from 'node:fs';
import { createRequire, syncBuiltinESMExports } from 'node:module';
import path from 'node:path';
import { GENESIS_DIGEST, verifyAuditExport } from '../src/evidence/audit.js';
import { makeHome, ROOT, runCli } from './helpers/cli.js';
import { specDigest } from './helpers/audit.js';
import {
  agreementSuites,
  emptyExport,
  event,
  exportOf,
  PARTS,
  reference,
  SMALL,
  streamKit,
  verdictProperty,
  type VerifyAuditFile,
} from './helpers/audit-stream.js';
import { replaying } from './helpers/property.js';

const built = (m: string) => import(path.join(ROOT, 'build', 'evidence', m));
const { verifyAuditFile, stopIdleAuditWorkers } = (await built('audit-stream.js')) as {
  verifyAuditFile: VerifyAuditFile;
  stopIdleAuditWorkers: () => Promise<number>;
};
const { STREAM_MIN_BYTES } = (await built('detect.js')) as { STREAM_MIN_BYTES: number };

const RUNS = Math.max(1, Number(process.env.LOOPSIGN_PROPERTY_RUNS ?? 50));

const kit = streamKit(verifyAuditFile);
// About three events per batch, eight batches dealt to two workers (a break at every event lands in each worker, on
// both sides of every boundary); batches checked in parts by the workers; one worker, the file read 61 bytes at a time
// (every event straddles a dozen chunks; where chunks fall is this thread's cutting, read in chunks of 1 to 400 bytes
// by the in-process property, and 7-byte reads cost this file a fifth of its CPU in reads).
// Parts at every event are checked on this thread in-process (checkBatch is the same function in a worker); here,
// at the first, last and boundary events.
const first = { workers: 2, ...SMALL };
agreementSuites(kit, {
  everyEvent: [first],
  first,
  all: [first, { workers: 2, ...PARTS }, { workers: 1, ...SMALL, chunkBytes: 61 }],
  many: 2,
  one: 1,
});

describe('worker threads are started for batches, and kept for the next file only when sound and idle', () => {
  // Counted by wrapping node's Worker: the build's live binding to it follows syncBuiltinESMExports. Each count
  // starts with no worker waiting from an earlier file, unless `keep`.
  async function started(run: () => Promise<unknown>, keep = false): Promise<number> {
    if (!keep) await stopIdleAuditWorkers();
    const threads = createRequire(import.meta.url)('node:worker_threads');
    const Real = threads.Worker;
    let count = 0;
    threads.Worker = class extends Real {
      constructor(...args: ConstructorParameters<typeof Real>) {
        super(...args);
        count++;
      }
    };
    syncBuiltinESMExports();
    try {
      await run();
    } finally {
      threads.Worker = Real;
      syncBuiltinESMExports();
    }
    return count;
  }

  it('a file refused before its events starts none; one batch starts one of two; eight batches both', async () => {
    const notJson = kit.fileOf(`\ufeff${JSON.stringify(exportOf(24))}`);
    expect(await started(async () => expect(await kit.streamed(notJson, first)).toMatchObject({ jsonError: expect.any(String) }))).toBe(0);
    const none = kit.fileOf(emptyExport(''));
    expect(await started(async () => expect(await kit.streamed(none, first)).toMatchObject({ result: { valid: true } }))).toBe(0);
    const one = kit.fileOf(JSON.stringify(exportOf(1)));
    expect(await started(async () => expect(await kit.streamed(one, first)).toMatchObject({ result: { valid: true } }))).toBe(1);
    const eight = kit.fileOf(JSON.stringify(exportOf(24)));
    expect(await started(async () => expect(await kit.streamed(eight, first)).toMatchObject({ result: { valid: true } }))).toBe(2);
  });

  it("the next file reuses the last file's workers, with its own verdict", async () => {
    const eight = kit.fileOf(JSON.stringify(exportOf(24)));
    // The next file, ready before the first is read: a break in a batch that a reused worker checks.
    const broken = exportOf(24);
    broken.events[16].result = 'failure';
    const ref = reference(JSON.stringify(broken));
    expect(ref.result).toMatchObject({ valid: false, sequence: 17 });
    const file = kit.fileOf(JSON.stringify(broken));
    // Kept for ten minutes, not IDLE_MS's seconds: on a loaded machine the next file may come late.
    const keep = { ...first, keepWorkersMs: 600_000 };
    expect(await started(async () => expect(await kit.streamed(eight, keep)).toMatchObject({ result: { valid: true } }))).toBe(2);
    // Both wait for the next file, which starts none and gets the reference's verdict.
    expect(await started(async () => expect(await kit.streamed(file, first)).toMatchObject(ref), true)).toBe(0);
    // They wait until stopped (or IDLE_MS): two, of this file.
    expect(await stopIdleAuditWorkers()).toBe(2);
  });
});

describe('red team: workers that fail while their file is refused', () => {
  it('are stopped without ending the process, and the next file gets its verdict', async () => {
    await stopIdleAuditWorkers();
    // Every batch dealt to a worker while `fail` makes it fail there (checkBatch throws on a BigInt start), as a
    // worker out of memory on a hostile batch would; the workers are node's, wrapped before they start.
    let fail = false;
    const threads = createRequire(import.meta.url)('node:worker_threads');
    const Real = threads.Worker;
    threads.Worker = class extends Real {
      postMessage(message: any, transfer?: any) {
        return super.postMessage(fail && typeof message?.id === 'number' ? { ...message, start: 1n } : message, transfer);
      }
    };
    syncBuiltinESMExports();
    try {
      // Read in one chunk and cut exactly: the two workers get four batches and fail on them while this thread checks
      // a large fifth itself, then an event over its cap refuses the file before the workers' errors are heard.
      const way = { ...first, exact: true, chunkBytes: 16 * 1024 * 1024, keepWorkersMs: 600_000 };
      await kit.streamed(kit.fileOf(JSON.stringify(exportOf(24))), way); // both workers started, and waiting
      const events = JSON.stringify(exportOf(8).events).slice(1, -1);
      const large = JSON.stringify({ a: Array.from({ length: 30_000 }, (_, i) => ({ i })) });
      const fat = JSON.stringify({ a: 'f'.repeat(4 * 1024 * 1024 + 10) });
      const refused = kit.fileOf(`{"format":"rateloop-audit-v1","events":[${events},${large},${fat}]}`);
      fail = true;
      await expect(kit.streamed(refused, way)).rejects.toMatchObject({ code: 'too_large' });
      fail = false;
      // Both were stopped (they had batches in them); the next file starts its own and gets the reference's verdict.
      expect(await stopIdleAuditWorkers()).toBe(0);
      const broken = exportOf(24);
      broken.events[9].result = 'failure';
      const text = JSON.stringify(broken);
      expect(await kit.streamed(kit.fileOf(text), first)).toMatchObject(reference(text));
    } finally {
      threads.Worker = Real;
      syncBuiltinESMExports();
    }
  });
});

describe('red team: random exports, mutated at random, read by worker threads (property-based)', () => {
  it("the streamed verdict is the reference's: the same result, the same strict refusal, and a refusal wherever the reference finds no JSON", async () => {
    // Which kinds of verdict come up is checked in-process, over ten times the cases.
    const { runs } = await verdictProperty(kit, { workers: [1, 2], runs: RUNS });
    if (!replaying()) expect(runs).toBe(RUNS);
  });
});

describe('red team: an events array of control characters is not an empty one', () => {
  it('through the built binary: a streamed file of that kind exits 2, not 0', async () => {
    // Padded with real white space to the size from which the command streams.
    const text = emptyExport('\x01').replace('{', `{${' '.repeat(STREAM_MIN_BYTES)}`);
    const r = await runCli(['--json', 'verify-evidence', '--audit', kit.fileOf(text)], makeHome());
    expect(r.code, r.stdout).toBe(2);
    expect(r.json().error).toMatchObject({ code: 'invalid_packet_shape', message: expect.stringMatching(/not usable JSON/) });
  });
});

describe('the command streams large audit exports', () => {
  const home = makeHome();

  /**
   * Write an export of `count` events, each padded to about `pad` bytes, without holding it whole; and, in the same
   * pass (the digests are the costly part), a copy named `broken` whose event `at` is changed after its digest.
   */
  async function bigExport(
    name: string,
    count: number,
    pad: number,
    broken?: { name: string; at: number },
  ): Promise<{ file: string; head: string; broken: string }> {
    const files = [name, ...(broken ? [broken.name] : [])].map((n) => path.join(kit.dir, n));
    const outs = files.map((f) => createWriteStream(f));
    const write = (out: (typeof outs)[number], text: string) => (out.write(text) ? undefined : new Promise((r) => out.once('drain', r)));
    for (const out of outs) out.write('{"format":"rateloop-audit-v1","workspaceId":"ws_1","events":[');
    const metadata = JSON.stringify({ pad: 'p'.repeat(pad) });
    let previous = GENESIS_DIGEST;
    for (let i = 1; i <= count; i++) {
      const e = event(i, previous, { metadata_json: metadata });
      e.event_digest = specDigest(previous, e);
      previous = e.event_digest;
      const text = (i > 1 ? ',' : '') + JSON.stringify(e);
      await write(outs[0]!, text);
      if (outs[1]) await write(outs[1], i === broken!.at ? text.replace('"result":"success"', '"result":"failure"') : text);
    }
    for (const out of outs) out.end(`],"integrity":{"eventCount":${count},"headDigest":"${previous}","valid":true}}`);
    await Promise.all(outs.map((out) => new Promise((r) => out.on('finish', r))));
    return { file: files[0]!, head: previous, broken: files[1] ?? '' };
  }

  it("an export of STREAM_MIN_BYTES or more gives the reference's verdict through the built binary, valid or broken", async () => {
    const { file, head, broken } = await bigExport('big.json', 3000, 6000, { name: 'broken.json', at: 2222 });
    expect(statSync(file).size).toBeGreaterThanOrEqual(STREAM_MIN_BYTES);
    const ok = await runCli(['--json', 'verify-evidence', '--audit', file, '--expected-head', head], home);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.json()).toMatchObject({ kind: 'audit', valid: true, eventCount: 3000, headDigest: head });
    // Detected as an audit export from its first bytes, without --audit.
    expect((await runCli(['--json', 'verify-evidence', file], home)).json()).toMatchObject({ kind: 'audit', valid: true });

    const bad = await runCli(['--json', 'verify-evidence', '--audit', broken], home);
    expect(bad.code, bad.stderr).toBe(8);
    const ref = verifyAuditExport(JSON.parse(readFileSync(broken, 'utf8')));
    expect(ref).toMatchObject({ errors: ['event_digest_mismatch'], sequence: 2222 });
    expect(bad.json().error).toMatchObject({ code: 'evidence_invalid', ...ref });
    const text = await runCli(['verify-evidence', '--audit', broken], home);
    expect(text.stderr).toContain(`first broken link: event 2222 (${ref.detail})`);
  });

  it('an export larger than the whole-file cap of 128 MiB verifies with the heap capped at 128 MB', async () => {
    const { file, head } = await bigExport('huge.json', 36, 3_900_000);
    expect(statSync(file).size).toBeGreaterThan(128 * 1024 * 1024);
    const r = await runCli(['--json', 'verify-evidence', '--audit', file], home, { env: { NODE_OPTIONS: '--max-old-space-size=128' } });
    expect(r.code, r.stderr).toBe(0);
    expect(r.json()).toMatchObject({ valid: true, eventCount: 36, headDigest: head });
    rmSync(file);
  });

  it('an event or the other fields beyond their caps are refused (exit 2), not read whole', async () => {
    const { file } = await bigExport('fat-event.json', 5, 4_300_000);
    const r = await runCli(['--json', 'verify-evidence', '--audit', file], home);
    expect(r.code, r.stderr).toBe(2);
    expect(r.json().error).toMatchObject({ code: 'too_large', message: expect.stringMatching(/an event larger than 4194304 bytes/) });
    const fields = kit.fileOf(`{"format":"rateloop-audit-v1","retention":"${'r'.repeat(17_000_000)}","events":[]}`);
    const f = await runCli(['--json', 'verify-evidence', '--audit', fields], home);
    expect(f.code, f.stderr).toBe(2);
    expect(f.json().error).toMatchObject({ code: 'too_large', message: expect.stringMatching(/outside its events array/) });
  });
});
