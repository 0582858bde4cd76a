// Offline evidence verification through the built binary: exit 0 with the result or exit 8 with the codes, an
// audit chain's refusal on the terminal, trusted-keys documents and --key-id, hostile files refused with a clear reason,
// and files far beyond each kind's cap read within a 128 MB heap. The verifier itself, in-process:
// test/evidence.test.ts.
import { afterAll, describe, expect, it } from 'vitest';
import { createWriteStream, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { coverageDigest } from '../src/evidence/coverage.js';
import { b64url, ED25519_SPKI_PREFIX } from '../src/evidence/keys.js';
import { KIND_MAX_BYTES } from '../src/evidence/detect.js';
import { makeHome, runCli } from './helpers/cli.js';
import { auditChain as chain, freshKey, KEY_ID, packet, PACKET_FILE, PIN, PIN_FILE } from './helpers/evidence.js';

describe('audit chains', () => {
  it('a null reason is refused through the built binary (malformed_field, the column named), hashed either way', async () => {
    const home = makeHome();
    const ok = await runCli(['verify-evidence', '--audit', home.file('ok.json', JSON.stringify(chain(3)))], home);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(/^audit: VALID/);
    for (const nullAs of ['null', 'string'] as const) {
      const file = home.file(`null-${nullAs}.json`, JSON.stringify(chain(3, false, { reason: null, nullAs })));
      const bad = await runCli(['--json', 'verify-evidence', '--audit', file], home);
      expect(bad.code).toBe(8);
      expect(bad.json().error).toMatchObject({ errors: ['malformed_field'], sequence: 1 });
      expect(bad.json().error.detail).toMatch(/event 1: reason is null, not a string/);
      const text = await runCli(['verify-evidence', '--audit', file], home);
      expect(text.stdout + text.stderr).toMatch(/first broken link: event 1 \(event 1: reason is null/);
    }
  });
});

describe('verify-evidence through the built binary', () => {
  const home = makeHome();
  const pinArgs = ['--public-key', PIN_FILE, '--key-id', KEY_ID];

  it('valid: exit 0 and the spec result in one JSON document', async () => {
    const r = await runCli(['--json', 'verify-evidence', PACKET_FILE, ...pinArgs], home);
    expect(r.code).toBe(0);
    expect(r.json()).toMatchObject({
      ok: true,
      kind: 'packet',
      valid: true,
      errors: [],
      packetDigest: 'sha256:670e62ddc14267bdf19b80ab57e90b82c526f8019675bd04b7911dfed91dff23',
    });
    const literal = await runCli(['verify-evidence', PACKET_FILE, '--public-key', PIN, '--key-id', KEY_ID], home);
    expect(literal.code).toBe(0);
    expect(literal.stdout).toMatch(/^packet: VALID/);
  });

  it('tampered: exit 8 with the codes; a wrong key id: the trust-anchor codes', async () => {
    const p = packet();
    p.payload.runId = 'run_other';
    const file = home.file('tampered.json', JSON.stringify(p));
    const r = await runCli(['--json', 'verify-evidence', file, ...pinArgs], home);
    expect(r.code).toBe(8);
    expect(r.json().error.errors).toEqual(expect.arrayContaining(['packet_digest_mismatch', 'signature_invalid']));
    const k = await runCli(
      ['--json', 'verify-evidence', PACKET_FILE, '--public-key', PIN_FILE, '--key-id', 'ed25519:2d5798c16bafaed29bdbccaa'],
      home,
    );
    expect(k.code).toBe(8);
    expect(k.json().error.errors).toEqual(['signing_key_id_mismatch', 'untrusted_signing_key']);
  });

  it('--trusted-keys with --key-id: that key and no other (issue 19): a wrong id fails, and no check is claimed that was not made', async () => {
    const x = b64url(Buffer.from(PIN, 'base64url').subarray(ED25519_SPKI_PREFIX.length));
    const other = freshKey();
    const entry = (keyId: string, spki: string, xx: string) => ({
      algorithm: 'Ed25519',
      keyId,
      publicKeyJwk: { kty: 'OKP', crv: 'Ed25519', x: xx },
      publicKeySpki: spki,
      status: 'current',
      uses: ['decision_packet'],
    });
    const both = home.file(
      'tk-both.json',
      JSON.stringify({
        schemaVersion: 'rateloop.evidence-public-trusted-keys.v1',
        keys: [entry(KEY_ID, PIN, x), entry(other.keyId, other.spki, b64url(Buffer.from(other.spki, 'base64url').subarray(12)))],
      }),
    );
    // The packet's own key, named: verified, and the check names the given id.
    const ok = await runCli(['--json', 'verify-evidence', PACKET_FILE, '--trusted-keys', both, '--key-id', KEY_ID], home);
    expect(ok.code, ok.stdout).toBe(0);
    expect(ok.json().checks).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ id: 'key_id', label: 'Packet key id equals the given key id', status: 'pass', expected: KEY_ID }),
      ]),
    );
    // Another key of the document: the packet is not signed by it.
    for (const json of [true, false]) {
      const wrong = await runCli(
        [...(json ? ['--json'] : []), 'verify-evidence', PACKET_FILE, '--trusted-keys', both, '--key-id', other.keyId],
        home,
      );
      expect(wrong.code).toBe(8);
      if (json) expect(wrong.json().error.errors).toEqual(expect.arrayContaining(['signing_key_id_mismatch']));
      else expect(wrong.stderr + wrong.stdout).not.toMatch(/ok\s+Packet key id equals the given key id/);
    }
    // An id the document does not hold.
    const absent = await runCli(
      ['--json', 'verify-evidence', PACKET_FILE, '--trusted-keys', both, '--key-id', 'ed25519:000000000000000000000000'],
      home,
    );
    expect(absent.code).toBe(8);
    expect(absent.json().error.errors).toEqual(expect.arrayContaining(['untrusted_signing_key']));
    // Not a key id at all, or two anchors at once: usage errors.
    expect((await runCli(['--json', 'verify-evidence', PACKET_FILE, '--trusted-keys', both, '--key-id', 'nonsense'], home)).code).toBe(2);
    expect((await runCli(['--json', 'verify-evidence', PACKET_FILE, '--trusted-keys', both, '--public-key', PIN_FILE], home)).code).toBe(2);
    // Without --key-id the key is looked up by the packet's own id: the check says so, it does not claim a given id.
    const plain = await runCli(['--json', 'verify-evidence', PACKET_FILE, '--trusted-keys', both], home);
    expect(plain.code).toBe(0);
    expect(plain.json().checks.map((c: { label: string }) => c.label)).not.toContain('Packet key id equals the given key id');
  });

  it('a saved trusted-keys document: current and retired keys verify; an unknown key does not', async () => {
    const x = b64url(Buffer.from(PIN, 'base64url').subarray(ED25519_SPKI_PREFIX.length));
    const other = freshKey();
    const doc = (status: string) => ({
      schemaVersion: 'rateloop.evidence-public-trusted-keys.v1',
      keys: [
        {
          algorithm: 'Ed25519',
          keyId: KEY_ID,
          publicKeyJwk: { kty: 'OKP', crv: 'Ed25519', x },
          publicKeySpki: PIN,
          status,
          uses: ['decision_packet'],
        },
      ],
    });
    for (const status of ['current', 'retired']) {
      const f = home.file(`tk-${status}.json`, JSON.stringify(doc(status)));
      const r = await runCli(['--json', 'verify-evidence', PACKET_FILE, '--trusted-keys', f], home);
      expect(r.code, r.stdout).toBe(0);
    }
    const only = {
      schemaVersion: 'rateloop.evidence-public-trusted-keys.v1',
      keys: [
        {
          algorithm: 'Ed25519',
          keyId: other.keyId,
          publicKeyJwk: { kty: 'OKP', crv: 'Ed25519', x: b64url(Buffer.from(other.spki, 'base64url').subarray(12)) },
          publicKeySpki: other.spki,
          status: 'current',
          uses: ['decision_packet'],
        },
      ],
    };
    const r = await runCli(
      ['--json', 'verify-evidence', PACKET_FILE, '--trusted-keys', home.file('tk-other.json', JSON.stringify(only))],
      home,
    );
    expect(r.code).toBe(8);
    expect(r.json().error.errors).toContain('untrusted_signing_key');
    const broken = doc('current');
    broken.keys[0]!.keyId = other.keyId;
    const b = await runCli(
      ['--json', 'verify-evidence', PACKET_FILE, '--trusted-keys', home.file('tk-broken.json', JSON.stringify(broken))],
      home,
    );
    expect(b.code).toBe(2);
    expect(b.json().error.code).toBe('invalid_trusted_keys');
    // uses must be an array of strings: a string was matched by substring ("not_decision_packet" contains it).
    for (const uses of ['not_decision_packet', undefined, [1]]) {
      const d: any = doc('current');
      d.keys[0].uses = uses;
      const u = await runCli(
        ['--json', 'verify-evidence', PACKET_FILE, '--trusted-keys', home.file(`tk-uses-${String(uses)}.json`, JSON.stringify(d))],
        home,
      );
      expect(u.code, u.stdout).toBe(2);
      expect(u.json().error).toMatchObject({
        code: 'invalid_trusted_keys',
        message: expect.stringMatching(/uses must be an array of strings/),
      });
    }
    const pinOut = path.join(home.dir, 'pin.spki.txt');
    const pin = await runCli(
      ['evidence', 'pin', '--key-id', KEY_ID, '--out', pinOut, '--trusted-keys', home.file('tk-c.json', JSON.stringify(doc('current')))],
      home,
    );
    expect(pin.code).toBe(0);
    expect(readFileSync(pinOut, 'utf8')).toBe(readFileSync(PIN_FILE, 'utf8'));
  });

  it.each([
    ['not JSON', 'not json at all', 2, 'invalid_packet_shape'],
    ['too large', `{"payload":{"a":"${'x'.repeat(2_000_001)}"},"signing":{}}`, 2, 'too_large'],
    ['deep nesting', `${'['.repeat(5000)}${']'.repeat(5000)}`, 2, 'invalid_packet_shape'],
    ['a huge number', '{"payload":{},"signing":{},"n":1e400}', 2, 'invalid_packet_shape'],
    ['duplicate keys', '{"payload":{"a":1,"a":2},"signing":{}}', 2, 'invalid_packet_shape'],
  ])('refuses %s with a clear reason', async (_n, text, code, errorCode) => {
    const f = home.file(`hostile-${errorCode}-${Math.random()}.json`, text);
    const r = await runCli(['--json', 'verify-evidence', f, ...pinArgs], home);
    expect(r.code).toBe(code);
    expect(r.json().error.code).toBe(errorCode);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it('a lone surrogate in the payload fails verification (exit 8), never crashes', async () => {
    const text = readFileSync(PACKET_FILE, 'utf8').replace('"run_synthetic_release_check"', '"run_\\ud800"');
    const r = await runCli(['--json', 'verify-evidence', home.file('surrogate.json', text), ...pinArgs], home);
    expect(r.code).toBe(8);
    expect(r.json().error.errors).toEqual(['verification_failed']);
  });

  it('missing flags, and the audit and coverage modes', async () => {
    const none = await runCli(['--json', 'verify-evidence', PACKET_FILE], home);
    expect(none.code).toBe(2);
    expect(none.json().error.code).toBe('missing_trust_anchor');
    const body: any = { schemaVersion: 'rateloop.assurance-coverage-export.v2', workspaceId: 'ws', scopes: [] };
    body.exportDigest = coverageDigest(body);
    const cov = home.file('cov.json', JSON.stringify(body));
    expect((await runCli(['--json', 'verify-evidence', '--coverage', cov], home)).code).toBe(0);
    expect((await runCli(['--json', 'verify-evidence', cov], home)).json().kind).toBe('coverage');
    body.workspaceId = 'other';
    writeFileSync(cov, JSON.stringify(body));
    const bad = await runCli(['--json', 'verify-evidence', '--coverage', cov], home);
    expect(bad.code).toBe(8);
    expect(bad.json().error.errors).toEqual(['export_digest_mismatch']);
  });
});

describe('reading within the cap of each kind of evidence file', () => {
  const home = makeHome();
  const dir = mkdtempSync(path.join(tmpdir(), 'loopsign-big-evidence-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  // The child's heap is capped at 128 MB: reading and parsing any of these files whole would exhaust it.
  const smallHeap = { env: { NODE_OPTIONS: '--max-old-space-size=128' } };

  /** A file of `bytes` bytes: head, `unit` repeated, tail — written in 1 MB pieces, never held whole here. */
  async function bigFile(name: string, head: string, unit: string, bytes: number, tail: string): Promise<string> {
    const file = path.join(dir, name);
    const out = createWriteStream(file);
    const piece = unit.repeat(Math.floor(1_000_000 / unit.length));
    out.write(head);
    for (let written = head.length; written < bytes - tail.length; written += piece.length) {
      if (!out.write(piece)) await new Promise((r) => out.once('drain', r));
    }
    out.end(tail);
    await new Promise((r) => out.on('finish', r));
    return file;
  }

  it('a 240 MB file of nested arrays is refused from its first 64 KiB, and as an audit export by its size', async () => {
    const file = await bigFile('arrays.json', '[', '[[]],', 240_000_000, '[]]');
    const r = await runCli(['--json', 'verify-evidence', file, '--public-key', PIN_FILE], home, smallHeap);
    expect(r.code, r.stderr).toBe(2);
    expect(r.json().error).toMatchObject({
      code: 'invalid_packet_shape',
      message: expect.stringMatching(/first 64 KiB show no packet, audit, coverage or trusted-keys fields/),
    });
    const a = await runCli(['--json', 'verify-evidence', '--audit', file], home, smallHeap);
    expect(a.code, a.stderr).toBe(2);
    expect(a.json().error).toMatchObject({
      code: 'too_large',
      message: expect.stringMatching(new RegExp(`an audit export may be at most ${KIND_MAX_BYTES.audit} bytes`)),
    });
    rmSync(file);
  });

  it('a file that starts like a packet is read only up to the 2 MB packet cap, from a file or from stdin', async () => {
    const file = await bigFile('packet-like.json', '{"payload":{"x":[', '[[]],', 30_000_000, '[]]}}');
    const r = await runCli(['--json', 'verify-evidence', file, '--public-key', PIN_FILE], home, smallHeap);
    expect(r.code, r.stderr).toBe(2);
    expect(r.json().error).toMatchObject({
      code: 'too_large',
      message: expect.stringMatching(new RegExp(`is ${statSync(file).size} bytes; an evidence packet may be at most 2000000 bytes`)),
    });
    const input = `{"payload":{"x":"${'x'.repeat(3_000_000)}"},"signing":{}}`;
    const s = await runCli(['--json', 'verify-evidence', '-', '--public-key', PIN_FILE], home, { ...smallHeap, input });
    expect(s.code, s.stderr).toBe(2);
    expect(s.json().error).toMatchObject({ code: 'too_large', message: expect.stringMatching(/stdin is more than 2000000 bytes/) });
  });

  it('within its cap, an export with far more objects and arrays than evidence has is refused before it is parsed', async () => {
    const file = await bigFile('audit-arrays.json', '{"format":"rateloop-audit-v1","integrity":{},"events":[', '[],', 30_000_000, '[]]}');
    const r = await runCli(['--json', 'verify-evidence', '--audit', file], home, smallHeap);
    expect(r.code, r.stderr).toBe(2);
    expect(r.json().error).toMatchObject({
      code: 'invalid_packet_shape',
      message: expect.stringMatching(new RegExp(`objects and arrays for ${statSync(file).size} characters`)),
    });
  });
});
