// Offline evidence verification, in-process: the shared example packet, every single-value tamper, trust anchors,
// legacy schemas, audit chains, coverage exports, the kind of a file from its first bytes, session cookies and download
// routes. The same through the built binary (its exit codes and documents, trusted-keys files, hostile and
// oversized files read under a capped heap): test/evidence.cli.test.ts.
import { describe, expect, it } from 'vitest';
import { verifyPacket, evidenceMerkleRoot } from '../src/evidence/packet.js';
import { auditEventDigest, verifyAuditExport, GENESIS_DIGEST } from '../src/evidence/audit.js';
import { coverageDigest, verifyCoverageExport } from '../src/evidence/coverage.js';
import { b64url } from '../src/evidence/keys.js';
import { KIND_MAX_BYTES, sniffKind } from '../src/evidence/detect.js';
import { parseSessionCookie } from '../src/evidence/session-cookie.js';
import { evidenceRoute } from '../src/evidence/download.js';
import { readVector } from './helpers/cli.js';
import { specDigest } from './helpers/audit.js';
import { auditChain as chain, freshKey, KEY_ID, packet, PIN, resign } from './helpers/evidence.js';

const anchor = { publicKey: PIN, keyId: KEY_ID };

/** Every leaf path of a JSON value. */
function leaves(v: unknown, p: (string | number)[] = []): (string | number)[][] {
  if (Array.isArray(v)) return v.length ? v.flatMap((x, i) => leaves(x, [...p, i])) : [p];
  if (v && typeof v === 'object') return Object.keys(v).length ? Object.entries(v).flatMap(([k, x]) => leaves(x, [...p, k])) : [p];
  return [p];
}
function mutate(obj: any, p: (string | number)[]): void {
  let o = obj;
  for (const k of p.slice(0, -1)) o = o[k];
  const k = p[p.length - 1]!;
  const v = o[k];
  o[k] =
    typeof v === 'string'
      ? `${v}x`
      : typeof v === 'number'
        ? v + 1
        : typeof v === 'boolean'
          ? !v
          : v === null
            ? 0
            : Array.isArray(v)
              ? [...v, 1]
              : { x: 1 };
}

describe('the shared example packet', () => {
  it('verifies with its pin and key id', () => {
    const r = verifyPacket(packet(), anchor);
    expect(r).toMatchObject({
      valid: true,
      errors: [],
      packetDigest: 'sha256:670e62ddc14267bdf19b80ab57e90b82c526f8019675bd04b7911dfed91dff23',
    });
    expect(r.checks.find((c) => c.id === 'signature')!.status).toBe('pass');
    expect(evidenceMerkleRoot(packet().payload.recomputation.responseLeaves)).toBe(
      'sha256:e8b18e8b558fe2c51e20bb60f276ad9e9b74fdcf32c49c5c935cc48ed456edf9',
    );
  });

  const paths = leaves(packet().payload);
  it(`fails after changing any one of its ${paths.length} payload leaves`, () => {
    expect(paths.length).toBeGreaterThan(100);
    for (const p of paths) {
      const mutated = packet();
      mutate(mutated.payload, p);
      const r = verifyPacket(mutated, anchor);
      expect(r.valid, p.join('.')).toBe(false);
      if (!r.errors.includes('verification_failed')) {
        expect(r.errors, p.join('.')).toContain('packet_digest_mismatch');
        expect(r.errors, p.join('.')).toContain('signature_invalid');
      }
    }
  });

  it('fails after reordering an array of the payload', () => {
    const p = packet();
    p.payload.recomputation.responseLeaves.reverse();
    expect(verifyPacket(p, anchor).errors).toEqual(expect.arrayContaining(['packet_digest_mismatch', 'signature_invalid']));
  });

  it.each([
    [
      'keyId',
      (p: any) => (p.signing.keyId = 'ed25519:000000000000000000000000'),
      ['signing_key_id_mismatch', 'untrusted_signing_key', 'packet_digest_mismatch', 'signature_invalid'],
    ],
    ['algorithm', (p: any) => (p.signing.algorithm = 'RSA'), ['unsupported_signature_algorithm']],
    ['publicKey', (p: any) => (p.signing.publicKey = freshKey().spki), ['untrusted_signing_key', 'packet_digest_mismatch']],
  ])('fails after changing signing.%s', (_n, change, codes) => {
    const p = packet();
    change(p);
    const r = verifyPacket(p, anchor);
    expect(r.valid).toBe(false);
    expect(r.errors).toEqual(expect.arrayContaining(codes as string[]));
  });

  it('names the trust-anchor codes for a wrong pin or key id, and needs an anchor', () => {
    expect(verifyPacket(packet(), { publicKey: PIN, keyId: 'ed25519:2d5798c16bafaed29bdbccaa' }).errors).toEqual([
      'signing_key_id_mismatch',
      'untrusted_signing_key',
    ]);
    expect(verifyPacket(packet(), { publicKey: freshKey().spki, keyId: KEY_ID }).errors).toContain('untrusted_signing_key');
    expect(verifyPacket(packet(), {}).errors).toContain('missing_trust_anchor');
    const d = packet();
    d.packetDigest = `sha256:${'0'.repeat(64)}`;
    expect(verifyPacket(d, anchor).errors).toEqual(['packet_digest_mismatch']);
    const s = packet();
    s.signature = b64url(Buffer.alloc(64, 7));
    expect(verifyPacket(s, anchor).errors).toEqual(['signature_invalid']);
    expect(verifyPacket({ payload: 1 }, anchor).errors).toEqual(['invalid_packet_shape']);
  });

  it('verifies v3 (legacy ordering, review context) and v2 packets signed with another key, and never trusts the packet key', () => {
    const key = freshKey();
    for (const v of ['v3', 'v2']) {
      const p = packet();
      p.payload.schemaVersion = `rateloop.human-assurance.evidence.${v}`;
      p.payload.metadataCheck = { Zeta: 1, alpha: 2, _under: 3, 'a-b': 4 }; // orders differently in the legacy form
      resign(p, key, 'locale-en-US');
      expect(verifyPacket(p, { publicKey: key.spki, keyId: key.keyId })).toMatchObject({ valid: true, errors: [] });
      resign(p, key, 'code-unit');
      expect(verifyPacket(p, { publicKey: key.spki, keyId: key.keyId }).errors).toContain('packet_digest_mismatch');
    }
    const forged = resign(packet(), key, 'code-unit');
    expect(verifyPacket(forged, anchor).errors).toEqual(expect.arrayContaining(['untrusted_signing_key', 'signing_key_id_mismatch']));
  });

  it('refuses a review context that breaks the rules (v4)', () => {
    const p = packet();
    p.payload.reviewContext.gate.type = 'blocking';
    expect(verifyPacket(p, anchor).errors).toContain('review_context_invalid');
  });
});

// Rules of the service's own verifier that the live corpus does not exercise one by one (assurance-evidence-core at
// the corpus commit): loopsign must not call valid what it calls invalid.
describe("the real verifier's rules beyond the corpus", () => {
  const live = readVector('live/evidence.json');
  const automated = () => structuredClone(live.cases.find((c: any) => c.id === 'automated-host-enforced').packet);
  const key = freshKey();
  const signedBy = (p: any) => resign(p, key, 'code-unit');
  const trusted = { publicKey: key.spki };

  it('an automated run reads its enforcement mode from gate.policyReference, never from gate', () => {
    const p = automated();
    expect(verifyPacket(signedBy(p), trusted)).toMatchObject({ valid: true, errors: [] });
    p.payload.reviewContext.gate.enforcementMode = 'advisory'; // ignored, as the service ignores it
    expect(verifyPacket(signedBy(p), trusted).valid).toBe(true);
    delete p.payload.reviewContext.gate.policyReference.enforcementMode;
    p.payload.reviewContext.gate.enforcementMode = 'host_enforced';
    const r = verifyPacket(signedBy(p), trusted);
    expect(r.errors).toEqual(['review_context_invalid']);
    expect(r.checks.find((c) => c.id === 'review_context')!.detail).toMatch(/policyReference\.enforcementMode/);
  });

  it.each([
    ['a fractional selection-policy version', (rc: any) => (rc.versions.selectionPolicy.version = rc.gate.policyReference.version = 1.5)],
    ['a selection-policy id that is not a string', (rc: any) => (rc.versions.selectionPolicy.id = rc.gate.policyReference.id = 7)],
    ['a request-profile version beyond 2^53', (rc: any) => (rc.versions.requestProfile.version = 2 ** 53)],
    ['a fractional lifecycle revision', (rc: any) => (rc.gate.stopGateEvidenceReference.lifecycleRevision = 1.5)],
    ['a fractional sample bucket', (rc: any) => (rc.selectionTrigger.sampleBucket = 0.5)],
  ])('%s is review_context_invalid', (_n, change) => {
    const p = automated();
    change(p.payload.reviewContext);
    expect(verifyPacket(signedBy(p), trusted).errors).toEqual(['review_context_invalid']);
  });

  it('an unknown schema still has its review context checked (only v2 is exempt)', () => {
    const p = automated();
    p.payload.schemaVersion = 'rateloop.human-assurance.evidence.v5';
    p.payload.reviewContext.selectionTrigger.reasonCodes = [];
    expect(verifyPacket(signedBy(p), trusted).errors.sort()).toEqual(['review_context_invalid', 'unsupported_schema_version']);
  });

  it('the aggregation inputs the service refuses make verification fail, never pass', () => {
    const unsuppressed = automated();
    const cell = unsuppressed.payload.recomputation.cases.find((c: any) => c.overall.candidate !== undefined);
    delete cell.overall.candidate;
    delete cell.overall.baseline;
    delete cell.overall.tie;
    expect(verifyPacket(signedBy(unsuppressed), trusted).errors).toEqual(['verification_failed']);
    const unreconciled = automated();
    unreconciled.payload.recomputation.reviewerSources[0].targetReviewerCount += 1;
    expect(verifyPacket(signedBy(unreconciled), trusted).errors).toEqual(['verification_failed']);
  });

  it('a foreign pin: the trust-anchor codes only, the signature checked with the packet key as the service does', () => {
    const p = automated();
    const r = verifyPacket(p, { publicKey: freshKey().spki });
    expect(r.errors).toEqual(['untrusted_signing_key', 'signing_key_id_mismatch']);
    expect(r.checks.find((c) => c.id === 'signature')).toMatchObject({
      status: 'pass',
      detail: expect.stringMatching(/not trusted by itself/),
    });
    expect(r.valid).toBe(false);
  });
});

describe('audit chains', () => {
  it('verifies a chain (snake_case and camelCase) and checks an expected head', () => {
    const c = chain(50);
    expect(verifyAuditExport(c)).toMatchObject({ valid: true, errors: [], eventCount: 50, headDigest: c.integrity.headDigest });
    expect(verifyAuditExport(chain(5, true)).valid).toBe(true);
    expect(verifyAuditExport(c, `sha256:${'1'.repeat(64)}`).errors).toEqual(['expected_head_mismatch']);
  });

  it.each([
    ['event_digest_mismatch', (c: any) => (c.events[6].result = 'failure'), 7],
    ['sequence_mismatch', (c: any) => (c.events[3].sequence = 9), 9],
    ['previous_digest_mismatch', (c: any) => c.events.splice(4, 1), 6],
    ['workspace_mismatch', (c: any) => (c.events[2].workspace_id = 'ws_2'), 3],
  ])('reports the first broken link: %s', (code, tamper, sequence) => {
    const c = chain(10);
    tamper(c);
    const r = verifyAuditExport(c);
    expect(r.errors).toEqual([code === 'previous_digest_mismatch' ? 'sequence_mismatch' : code]);
    expect(r.sequence).toBe(code === 'previous_digest_mismatch' ? 6 : sequence);
  });

  it('null purpose/reason/targetId: refused (malformed_field), hashed as the server keeps them or as the checker writes them', () => {
    // The server hashes null, the service's offline checker String(null): no verifier of the service stands behind
    // both, so loopsign says valid for neither (issue 39; it once kept null and said valid with a note).
    for (const options of [{ reason: null }, { reason: null, nullAs: 'string' as const }]) {
      const r = verifyAuditExport(chain(4, false, options));
      expect(r).toMatchObject({ valid: false, errors: ['malformed_field'], sequence: 1 });
      expect(r.detail).toMatch(/event 1: reason is null, not a string/);
    }
    expect(verifyAuditExport(chain(4, false, { reason: 'retention' })).valid).toBe(true);
  });

  it('times: only the form toISOString() writes; a date JavaScript would move is malformed_field, one it cannot read verification_failed', () => {
    const at = (time: unknown) => {
      const c = chain(2);
      c.events[0].occurred_at = time;
      return verifyAuditExport(c);
    };
    for (const moved of [
      '2026-02-29T00:00:00.000Z',
      '2026-04-31T00:00:00.000Z',
      '2026-01-01T24:00:00.000Z',
      '2026-01-01',
      '2026-01-01T00:00:00Z',
    ])
      expect(at(moved), String(moved)).toMatchObject({ errors: ['malformed_field'], sequence: 1 });
    // (Epoch milliseconds too: the checker reads String(n), which is no date.)
    for (const unreadable of ['2026-13-01T00:00:00.000Z', '2026-01-01T23:60:00.000Z', 'yesterday', null, 1_780_000_000_000])
      expect(at(unreadable).errors, String(unreadable)).toEqual(['verification_failed']);
    // February 29 of a leap year is written back unchanged: it is checked as far as its digest.
    expect(at('2024-02-29T00:00:00.000Z')).toMatchObject({ errors: ['event_digest_mismatch'], sequence: 1 });
  });

  it('a column spelled both ways is ambiguous_column, whatever the values', () => {
    for (const [snake, camel] of [
      ['actor_kind', 'actorKind'],
      ['metadata_json', 'metadata'],
      ['event_digest', 'eventDigest'],
    ]) {
      const c = chain(2);
      c.events[1][camel] = snake === 'metadata_json' ? JSON.parse(c.events[1][snake]) : c.events[1][snake];
      expect(verifyAuditExport(c), camel).toMatchObject({ valid: false, errors: ['ambiguous_column'], sequence: 2 });
    }
  });

  it('the fast digest path equals the spec-literal digest over varied rows', () => {
    const rows: any[] = [
      {
        metadata_json: JSON.stringify({ z: [1, { y: 'é', Y: null }], Ä: 'ü', a: { '': 1 } }),
        occurred_at: '2026-01-02T03:04:05.000Z',
        purpose: '',
        target_id: 'null',
      },
      { metadata_json: '{}', occurred_at: '2026-10-06T10:00:00.000Z', request_correlation: 'req_1', reason: 'quote "x" \\ \u2028' },
      { metadata_json: JSON.stringify({ n: 1.5e21, m: -0, t: true }), occurred_at: '2026-08-06T10:00:00.123Z', action: '\u{1F600}' },
    ];
    let previous = GENESIS_DIGEST;
    rows.forEach((extra, i) => {
      const e = { ...chain(1).events[0], sequence: i + 1, ...extra };
      expect(auditEventDigest(previous, e)).toBe(specDigest(previous, e));
      previous = specDigest(previous, e);
    });
  });

  it('head, count, shape and workspace', () => {
    const c = chain(3);
    c.integrity.headDigest = GENESIS_DIGEST;
    expect(verifyAuditExport(c).errors).toEqual(['head_mismatch']);
    expect(verifyAuditExport({ events: 1 }).errors).toEqual(['invalid_export_shape']);
    expect(verifyAuditExport({ ...chain(1), workspaceId: undefined }).errors).toEqual(['workspace_missing']);
    const unflagged = chain(3);
    unflagged.integrity.valid = false;
    expect(verifyAuditExport(unflagged).errors).toEqual(['head_mismatch']);
  });

  it("another format is refused, with the service verifier's code and the format named", () => {
    for (const format of ['rateloop-audit-v2', undefined]) {
      const r = verifyAuditExport({ ...chain(3), format });
      expect(r).toMatchObject({ valid: false, errors: ['invalid_export_shape'] });
      expect(r.detail).toMatch(/is not rateloop-audit-v1/);
    }
  });
});

describe('coverage exports', () => {
  it('recomputes exportDigest over the RFC 8785 form', () => {
    const body: any = {
      schemaVersion: 'rateloop.assurance-coverage-export.v2',
      workspaceId: 'ws_1',
      exportedAt: '2026-08-06T10:00:00.000Z',
      counts: { scopes: 0 },
      scopes: [],
    };
    body.exportDigest = coverageDigest(body);
    expect(verifyCoverageExport(body)).toMatchObject({ valid: true });
    body.counts.scopes = 1;
    expect(verifyCoverageExport(body).errors).toEqual(['export_digest_mismatch']);
  });
});

describe('reading within the cap of each kind of evidence file', () => {
  it('tells the kind from the first bytes, as liberally as a cut prefix allows', () => {
    expect(sniffKind('{"payload":{"schemaVersion":"rateloop.human-assurance.evid')).toBe('packet');
    expect(sniffKind('\ufeff {"events":[{"event_id":"e1"')).toBe('audit');
    expect(sniffKind('{"exportedAt":"2026","format":"rateloop-audit-v1","integrity":{')).toBe('audit');
    expect(sniffKind('{"schemaVersion":"rateloop.assurance-coverage-export.v2","scopes":[')).toBe('coverage');
    expect(sniffKind('{"schemaVersion":"rateloop.evidence-public-trusted-keys.v1","keys":[')).toBe('trusted-keys');
    // Keys inside nested values do not count; neither does anything that is not an object.
    expect(sniffKind('{"x":{"payload":1,"events":[]},"y":"{\\"signing\\":')).toBe('unknown');
    expect(sniffKind('[[[],[]],[[]],')).toBe('unknown');
    // Several kinds: the one with the smallest cap is read.
    expect(sniffKind('{"events":[],"payload":{')).toBe('packet');
    expect(KIND_MAX_BYTES.packet).toBeLessThan(KIND_MAX_BYTES.audit);
  });
});

describe('the session cookie for evidence downloads', () => {
  const value = 'Qm9ndXMtc2Vzc2lvbi10b2tlbi1mb3ItdGVzdHMtb25seQ';
  it('takes the bare value, name=value, or a copied Cookie header, and sends only the session cookie', () => {
    expect(parseSessionCookie(`${value}\n`, 'f')).toBe(`__Host-rateloop-session=${value}`);
    expect(parseSessionCookie(`rateloop-session=${value}`, 'f')).toBe(`rateloop-session=${value}`);
    expect(parseSessionCookie(`Cookie: a=1; __Host-rateloop-session=${value}; rateloop-session=other-value-123456`, 'f')).toBe(
      `__Host-rateloop-session=${value}`,
    );
  });

  it.each([
    ['no session cookie among others', 'a=1; b=2'],
    ['a value with a space', `__Host-rateloop-session=${value} x`],
    ['a value too short', 'short'],
    ['two lines', `${value}\n${value}`],
  ])('refuses %s (exit 6), never echoing what it read', (_n, text) => {
    let error: any;
    try {
      parseSessionCookie(text, 'the session cookie file c.txt');
    } catch (e) {
      error = e;
    }
    expect(error).toMatchObject({ exitCode: 6, code: 'session_cookie_invalid' });
    expect(`${error.message} ${error.hint}`).not.toContain(value);
  });
});

describe('download routes', () => {
  it('build the route from checked ids: "." and ".." (which a URL resolves by climbing, encoded or not) are refused', () => {
    expect(evidenceRoute({ what: 'run', workspace: 'ws_1', runId: 'run:1.2' })).toMatchObject({
      path: '/api/account/workspaces/ws_1/assurance/runs/run%3A1.2/evidence',
      defaultName: 'evidence-run:1.2.json',
    });
    expect(evidenceRoute({ what: 'coverage', workspace: 'ws_1', from: '2026-01-01T00:00:00Z' }).query).toEqual({
      from: '2026-01-01T00:00:00Z',
      to: undefined,
    });
    for (const [workspace, runId] of [
      ['..', 'run_1'],
      ['ws_1', '.'],
      ['ws_1', '..'],
      ['ws/1', 'run_1'],
      ['ws_1', 'run_1/../x'],
    ]) {
      expect(() => evidenceRoute({ what: 'run', workspace: workspace!, runId })).toThrow(
        expect.objectContaining({ code: 'invalid_id', exitCode: 2 }),
      );
    }
    expect(() => evidenceRoute({ what: 'run', workspace: 'ws_1' })).toThrow(/needs RUN_ID/);
  });
});
