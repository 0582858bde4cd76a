// Hostile shapes where the client reads a document nobody has checked yet (issue 23): a trusted-keys document, an
// evidence packet (signed by the key the test pins, so only its shape can make it fail), an audit export, and the
// runtime file of `rate commit --offline`. Each must be refused with its documented code and exit code, as one line:
// never a crash (an internal error, exit 1), never "valid" for something malformed.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Context } from '../src/context.js';
import { LoopsignError } from '../src/errors.js';
import { verifyAuditExport } from '../src/evidence/audit.js';
import { invalidError, trustedKeysFrom, verifyEvidenceFile } from '../src/evidence/files.js';
import { checkTrustedKeysDocument } from '../src/evidence/keys.js';
import { offlineCommit, type OfflineOptions } from '../src/rate/offline-commit.js';
import { auditChain, freshKey, packet, resign } from './helpers/evidence.js';

const dir = mkdtempSync(path.join(tmpdir(), 'loopsign-evidence-boundary-'));
let files = 0;
/** The document written as JSON text (so that a "__proto__" key is an own key, as it is in a file), and its path. */
function fileOf(text: string): string {
  const file = path.join(dir, `doc-${files++}.json`);
  writeFileSync(file, text);
  return file;
}

/** The code and exit code a call fails with ('passed' when it does not fail; a non-loopsign exception is exit 1). */
async function outcome(f: () => unknown): Promise<{ code: string; exit: number; message?: string }> {
  try {
    await f();
    return { code: 'passed', exit: 0 };
  } catch (error) {
    if (error instanceof LoopsignError) return { code: error.code, exit: error.exitCode, message: error.message };
    return { code: `exception: ${(error as Error).message}`, exit: 1 };
  }
}

const HOSTILE = ['x', 7, 1.5, true, null, [], {}, [[{}]], 2 ** 60];
const named = (values: unknown[]) => values.map((v) => [JSON.stringify(v) ?? 'undefined', v] as const);
/** Set `value` at `at` (a path of keys) in a copy of `doc`. */
function withField(doc: unknown, at: (string | number)[], value: unknown): any {
  const copy = structuredClone(doc) as any;
  let o = copy;
  for (const k of at.slice(0, -1)) o = o[k];
  o[at.at(-1)!] = value;
  return copy;
}

describe('the trusted-keys document (evidence keys, evidence pin, --trusted-keys)', () => {
  const key = freshKey();
  const listed = {
    algorithm: 'Ed25519',
    keyId: key.keyId,
    publicKeySpki: key.spki,
    publicKeyJwk: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(key.spki, 'base64url').subarray(12).toString('base64url') },
    status: 'current',
    uses: ['decision_packet'],
  };
  const doc = { schemaVersion: 'rateloop.evidence-public-trusted-keys.v1', keys: [listed] };
  const refused = { code: 'invalid_trusted_keys', exit: 2 };
  const check = (d: unknown) => outcome(() => checkTrustedKeysDocument(d));

  it('the well-formed document is read (the mutations below are what fails)', () => {
    const { publicKeyJwk: _, ...read } = listed;
    expect(checkTrustedKeysDocument(doc)).toEqual([read]);
  });

  it.each(named(HOSTILE))('the whole document = %s: refused (invalid_trusted_keys, exit 2)', async (_, bad) => {
    expect(await check(bad)).toMatchObject(refused);
  });

  it.each(named(HOSTILE))('keys = %s: refused (invalid_trusted_keys, exit 2)', async (_, bad) => {
    expect(await check({ ...doc, keys: bad })).toMatchObject(refused);
  });

  it.each(named(HOSTILE))('a listed key = %s: refused (invalid_trusted_keys, exit 2)', async (_, bad) => {
    expect(await check({ ...doc, keys: [listed, bad] })).toMatchObject(refused);
  });

  for (const field of ['keyId', 'publicKeySpki', 'algorithm', 'status', 'uses', 'publicKeyJwk'] as const) {
    // An empty list of uses is a key trusted for nothing, not a malformed one.
    const values = [...HOSTILE, undefined, '!not base64url!'].filter((v) => !(field === 'uses' && Array.isArray(v) && v.length === 0));
    it.each(named(values))(`a key's ${field} = %s: refused (invalid_trusted_keys, exit 2)`, async (_, bad) => {
      expect(await check({ ...doc, keys: [{ ...listed, [field]: bad }] })).toMatchObject(refused);
    });
  }

  it.each(named([...HOSTILE, '!not base64url!', '']))(
    "a key's publicKeyJwk.x = %s: refused (invalid_trusted_keys, exit 2)",
    async (_, bad) => {
      expect(await check({ ...doc, keys: [{ ...listed, publicKeyJwk: { ...listed.publicKeyJwk, x: bad } }] })).toMatchObject(refused);
    },
  );

  it.each(named([['decision_packet', 7], 'decision_packet', [null], [['decision_packet']]]))(
    "a key's uses = %s: refused (invalid_trusted_keys, exit 2)",
    async (_, bad) => {
      expect(await check({ ...doc, keys: [{ ...listed, uses: bad }] })).toMatchObject(refused);
    },
  );

  it('a key hidden behind "__proto__" or "constructor" is no key; the refusal is one line', async () => {
    const file = fileOf(
      JSON.stringify({ ...doc, keys: [{ __proto__: listed }] }).replace('"keys":[{}]', `"keys":[{"__proto__":${JSON.stringify(listed)}}]`),
    );
    const viaFile = await outcome(() => trustedKeysFrom(file));
    expect(viaFile).toMatchObject(refused);
    expect(viaFile.message).not.toContain('\n');
    expect(
      await check(JSON.parse(`{"schemaVersion":"${doc.schemaVersion}","keys":[{"constructor":${JSON.stringify(listed)}}]}`)),
    ).toMatchObject(refused);
    expect(await check(JSON.parse(`{"__proto__":${JSON.stringify(doc)}}`))).toMatchObject(refused);
  });
});

describe('an evidence packet, signed by the pinned key: only its shape can fail it', () => {
  const key = freshKey();
  const signedPacket = (p: any) => resign(p, key, 'code-unit');
  /** The verdict through the command's own path (the file read strictly, the pin given); a crash is an exception. */
  async function verdict(doc: any, resignIt = true) {
    const text =
      resignIt && doc && typeof doc === 'object' && !Array.isArray(doc) && doc.payload !== undefined
        ? JSON.stringify(signedPacket(doc))
        : JSON.stringify(doc);
    const file = fileOf(text);
    try {
      const o = await verifyEvidenceFile(file, undefined, { publicKey: key.spki });
      if (o.result.valid) return { valid: true };
      const error = invalidError(o);
      return { valid: false, code: error.code, exit: error.exitCode, errors: o.result.errors };
    } catch (error) {
      if (error instanceof LoopsignError) return { valid: false, code: error.code, exit: error.exitCode };
      return { valid: 'crashed', message: (error as Error).message };
    }
  }

  it('the example packet, re-signed, is valid (the mutations below are what fails)', async () => {
    expect(await verdict(packet())).toEqual({ valid: true });
  });

  it.each(named(HOSTILE))('the whole packet = %s: refused', async (_, bad) => {
    expect((await verdict(bad, false)).valid).toBe(false);
  });

  const FIELDS: (string | number)[][] = [
    ['payload'],
    ['payload', 'recomputation'],
    ['payload', 'recomputation', 'cases'],
    ['payload', 'recomputation', 'cases', 0],
    ['payload', 'recomputation', 'cases', 0, 'overall'],
    ['payload', 'recomputation', 'cases', 0, 'overall', 'validReviewerCount'],
    ['payload', 'recomputation', 'cases', 0, 'sourceCounts'],
    ['payload', 'recomputation', 'cases', 0, 'sourceCounts', 0],
    ['payload', 'recomputation', 'reviewerSources'],
    ['payload', 'recomputation', 'reviewerSources', 0],
    ['payload', 'recomputation', 'caseLeaves'],
    ['payload', 'aggregation'],
    ['payload', 'aggregation', 'passRule'],
    ['payload', 'aggregation', 'passRule', 'thresholdBps'],
    ['payload', 'aggregation', 'passRule', 'minimumValidResponses'],
    ['payload', 'aggregation', 'minimumAggregationSize'],
    ['payload', 'reviewContext'],
    ['payload', 'reviewContext', 'selectionTrigger'],
    ['payload', 'reviewContext', 'versions'],
    ['payload', 'frozen'],
    ['payload', 'roots'],
  ];
  // A pass threshold of 7 bps is a threshold; the other values are not.
  const legit = (at: (string | number)[], v: unknown) => at.at(-1) === 'thresholdBps' && v === 7;
  for (const at of FIELDS) {
    it.each(named(HOSTILE.filter((v) => !legit(at, v))))(`${at.join('.')} = %s: never valid`, async (_, bad) => {
      const v = await verdict(withField(packet(), at, bad));
      expect(v.valid).toBe(false);
    });
  }

  it.each(named([...HOSTILE, '!not base64url!']))('signing.publicKey = %s: refused (evidence_invalid, exit 8)', async (_, bad) => {
    const p = signedPacket(packet());
    p.signing.publicKey = bad;
    expect(await verdict(p, false)).toMatchObject({ valid: false, code: 'evidence_invalid', exit: 8 });
  });

  it.each(named([...HOSTILE, '!not base64url!']))('signature = %s: refused (evidence_invalid, exit 8)', async (_, bad) => {
    const p = signedPacket(packet());
    p.signature = bad;
    expect(await verdict(p, false)).toMatchObject({ valid: false, code: 'evidence_invalid', exit: 8 });
  });

  it('a payload or signing behind "__proto__" is no payload: refused (evidence_invalid, exit 8)', async () => {
    const p = signedPacket(packet());
    const text = JSON.stringify({ payload: { __proto__x: 1 }, signing: p.signing, packetDigest: p.packetDigest, signature: p.signature });
    const file = fileOf(text.replace('"__proto__x":1', `"__proto__":${JSON.stringify(p.payload)}`));
    const o = await verifyEvidenceFile(file, undefined, { publicKey: key.spki });
    expect(o.result.valid).toBe(false);
    expect(invalidError(o).exitCode).toBe(8);
  });
});

describe('an audit export', () => {
  const chain = auditChain(3);
  it('the chain is valid (the mutations below are what fails)', () => {
    expect(verifyAuditExport(chain).valid).toBe(true);
  });
  const FIELDS: (string | number)[][] = [
    ['events'],
    ['events', 1],
    ['events', 1, 'sequence'],
    ['events', 1, 'workspace_id'],
    ['events', 1, 'previous_digest'],
    ['events', 1, 'event_digest'],
    ['events', 1, 'metadata_json'],
    ['events', 1, 'occurred_at'],
    ['integrity'],
    ['integrity', 'eventCount'],
    ['integrity', 'headDigest'],
    ['integrity', 'valid'],
    ['workspaceId'],
    ['format'],
  ];
  for (const at of FIELDS) {
    // integrity.valid = true is what the chain already says.
    it.each(named(HOSTILE.filter((v) => !(at.at(-1) === 'valid' && v === true))))(
      `${at.join('.')} = %s: never valid, never a crash`,
      (_, bad) => {
        const r = verifyAuditExport(withField(chain, at, bad));
        expect(r.valid).toBe(false);
        expect(r.errors.length).toBeGreaterThan(0);
      },
    );
  }
  it.each(named(HOSTILE))('the whole export = %s: invalid_export_shape', (_, bad) => {
    expect(verifyAuditExport(bad).errors).toEqual(['invalid_export_shape']);
  });
});

describe('the runtime file of rate commit --offline', () => {
  const runtime = {
    roundId: '12',
    roundReferenceRatingBps: 5000,
    epochDuration: 1200,
    drandChainHash: '0x52db9ba70e0cc0f6eaf7803dd07447a1f5477735fd3f661792ba94600c84e971',
    drandGenesisTimeSeconds: 1692803367,
    drandPeriodSeconds: 3,
  };
  const options = (file: string): OfflineOptions => ({
    runtime: file,
    voter: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
    contentId: '1',
    isUp: true,
    prediction: '60',
    stake: '1',
  });
  // A context with no configuration and no store: every hostile runtime is refused before either is needed.
  const ctx = {
    config: () => Promise.reject(new Error('no configuration in this test')),
    store: () => Promise.reject(new Error('the store must not be reached')),
  } as unknown as Context;
  const commit = (doc: unknown) => outcome(() => offlineCommit(ctx, options(fileOf(JSON.stringify(doc)))));
  /** Refused as the user's mistake: a usage error (exit 2) naming the field, in one line. */
  const usage = (o: { code: string; exit: number; message?: string }, field?: string) => {
    expect(o.exit, o.code).toBe(2);
    expect(['invalid_runtime', 'invalid_vote']).toContain(o.code);
    expect(o.message).not.toContain('\n');
    if (field) expect(o.message).toContain(field);
  };

  it.each(named(HOSTILE))('the whole file = %s: refused (invalid_runtime, exit 2)', async (_, bad) => {
    usage(await commit(bad));
  });

  it.each(named(HOSTILE))('{ "runtime": %s }: refused (invalid_runtime, exit 2)', async (_, bad) => {
    usage(await commit({ runtime: bad }));
  });

  for (const field of Object.keys(runtime)) {
    it.each(named(['x', 1.5, true, null, [], {}, [[{}]], -1, 2 ** 53 + 2]))(`runtime.${field} = %s: refused (exit 2)`, async (_, bad) => {
      usage(await commit({ runtime: { ...runtime, [field]: bad } }), field);
    });
  }

  it.each(named(['abc', 1.5, [], {}, true, -1, 2 ** 53 + 2]))('runtime.targetRound = %s: refused (exit 2)', async (_, bad) => {
    usage(await commit({ runtime: { ...runtime, targetRound: bad } }), 'targetRound');
  });

  // A "runtime" field that is there but is no object is a malformed file: the fields beside it are not read instead
  // (the code before read an array there, and refused the file).
  it.each(named(['x', 7, true, [], [runtime]]))(
    '{ "runtime": %s, ...the fields beside it }: refused (invalid_runtime, exit 2)',
    async (_, bad) => {
      usage(await commit({ ...runtime, runtime: bad }), 'runtime');
    },
  );

  it('a runtime behind "__proto__" is no runtime: refused (invalid_runtime, exit 2)', async () => {
    const file = fileOf(`{"__proto__":${JSON.stringify(runtime)}}`);
    usage(await outcome(() => offlineCommit(ctx, options(file))), 'roundId');
  });
});
