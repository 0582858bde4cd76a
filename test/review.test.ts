// Units of the workspace review client that the end-to-end suites reach only indirectly: the request budget of
// the shared MCP limit, media types from bytes, the 64 KiB body cap, the run a delivery projects into, the credential
// forms and the terminal-evidence layout.
import { describe, expect, it } from 'vitest';
import { createHash, generateKeyPairSync, sign } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { detectMediaType, mediaTypeOption } from '../src/review/artifacts.js';
import { readCredential } from '../src/review/credential.js';
import { checkGateEvidence } from '../src/review/gate.js';
import { withKey } from '../src/review/private-review.js';
import { runIdOfDelivery } from '../src/review/run-evidence.js';
import { MinuteBudget } from '../src/review/workspace-mcp.js';
import { LoopsignError } from '../src/errors.js';
import { keyIdOf } from '../src/evidence/keys.js';

describe('the shared 60-a-minute MCP budget', () => {
  it('lets 60 requests go in a UTC minute, then waits for the next minute, and counts the waited one there', () => {
    let now = Date.UTC(2026, 10, 22, 12, 0, 30);
    const b = new MinuteBudget(() => now, 60);
    for (let i = 0; i < 60; i++) expect(b.take()).toBe(0);
    expect(b.take()).toBe(30_000);
    now += 30_000;
    for (let i = 0; i < 59; i++) expect(b.take()).toBe(0);
    expect(b.take()).toBeGreaterThan(0);
  });
});

describe('artifacts', () => {
  it('detects the media type from the bytes, never the name', () => {
    expect(detectMediaType(Buffer.from('89504e470d0a1a0a0000', 'hex'))).toBe('image/png');
    expect(detectMediaType(Buffer.from('%PDF-1.7\n'))).toBe('application/pdf');
    expect(detectMediaType(Buffer.from('{"a":1}'))).toBe('application/json');
    expect(detectMediaType(Buffer.from('{not json'))).toBe('text/plain');
    expect(detectMediaType(Buffer.from('plain words ü'))).toBe('text/plain');
    expect(detectMediaType(Buffer.from([0xff, 0xfe, 0x00, 0x01]))).toBe('application/octet-stream');
  });

  it('a named media type is reduced to type/subtype as the service stores it', () => {
    expect(mediaTypeOption('Text/Plain; charset=utf-8', '--source-type')).toBe('text/plain');
    expect(() => mediaTypeOption('plain', '--source-type')).toThrow(/is not a media type/);
  });

  it('the body is measured as it will be sent: 65,536 bytes fit, one more does not', () => {
    const payload = (n: number) => ({ projectId: 'hap_x', source: { contentType: 'text/plain', bytesBase64: 'A'.repeat(n) } });
    const overhead = Buffer.byteLength(JSON.stringify({ idempotencyKey: 'k'.repeat(12), ...payload(0) }));
    expect(withKey(payload(65_536 - overhead), 'k'.repeat(12), false).bodyBytes).toBe(65_536);
    let error: unknown;
    try {
      withKey(payload(65_537 - overhead), 'k'.repeat(12), false);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(LoopsignError);
    expect((error as LoopsignError).exitCode).toBe(2);
    expect((error as LoopsignError).details).toMatchObject({ bodyBytes: 65_537, limit: 65_536 });
  });
});

describe("a delivery's run", () => {
  it('is hau_ + the first 40 hex of SHA-256(deliveryId + NUL), as the service projects it', () => {
    expect(runIdOfDelivery('hpud_0000000000000000000000000000000000000000')).toMatch(/^hau_[0-9a-f]{40}$/);
    const d = 'hpud_1111111111111111111111111111111111111111';
    expect(runIdOfDelivery(d)).toBe(
      `hau_${createHash('sha256')
        .update(Buffer.concat([Buffer.from(d), Buffer.from([0])]))
        .digest('hex')
        .slice(0, 40)}`,
    );
    expect(runIdOfDelivery('a')).not.toBe(runIdOfDelivery('b'));
  });
});

describe('credential forms', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'loopsign-cred-'));
  const file = (text: string) => {
    const f = path.join(dir, `k-${Math.random()}`);
    writeFileSync(f, text);
    return f;
  };
  it('an rlk_ key or an rlo_at_ token; the assurance routes take only the key', async () => {
    const key = `rlk_${'a'.repeat(16)}_${'B'.repeat(43)}`;
    expect((await readCredential({ apiKeyFile: file(key + '\n') }, {})).kind).toBe('api_key');
    const token = `rlo_at_${'c'.repeat(43)}`;
    expect((await readCredential({ apiKeyFile: file(token) }, {})).kind).toBe('agent_token');
    await expect(readCredential({ apiKeyFile: file(token) }, {}, ['api_key'])).rejects.toMatchObject({
      code: 'credential_not_accepted',
      exitCode: 6,
    });
    await expect(readCredential({ apiKeyFile: file(`rlk_${'A'.repeat(16)}_${'B'.repeat(43)}`) }, {})).rejects.toMatchObject({
      code: 'api_key_invalid',
      exitCode: 6,
    });
    await expect(readCredential({ apiKeyFile: file(key), apiKeyEnv: 'X' }, {})).rejects.toMatchObject({ exitCode: 2 });
  });
});

describe('terminal evidence', () => {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const spki = publicKey.export({ format: 'der', type: 'spki' });
  const trust = { keys: [{ keyId: keyIdOf(spki), spki: Buffer.from(spki).toString('base64url') }], source: 'test' };
  const payload = {
    schemaVersion: 'rateloop.human-review-terminal-payload.v2',
    workspaceId: 'ws_x',
    integrationId: 'agi_x',
    opportunityId: 'aop_x',
    terminalStatus: 'completed',
    releaseDisposition: 'authorized_positive',
    resultSemantics: 'assurance',
    resultOutcome: 'positive',
    resultCommitment: `sha256:${'1'.repeat(64)}`,
    outputCommitment: `sha256:${'2'.repeat(64)}`,
    policyBindingHash: `sha256:${'3'.repeat(64)}`,
    issuedAt: '2026-11-22T12:00:00.000Z',
  };
  const signed = (p: Record<string, unknown>) => ({
    schemaVersion: 'rateloop.human-review-terminal-evidence.v2',
    keyId: keyIdOf(spki),
    payload: p,
    signature: sign(null, Buffer.from(JSON.stringify(p)), privateKey).toString('base64url'),
  });

  it("verifies over the payload in the service's key order, whatever order it arrives in", () => {
    const e = signed(payload);
    expect(checkGateEvidence(e, trust).status).toBe('verified');
    const reordered = { ...e, payload: Object.fromEntries(Object.entries(payload).reverse()) };
    expect(checkGateEvidence(reordered, trust).status).toBe('verified');
  });

  it('an extra payload member, another key or a changed field never verifies', () => {
    expect(checkGateEvidence({ ...signed(payload), payload: { ...payload, note: 'x' } }, trust)).toMatchObject({ status: 'malformed' });
    expect(checkGateEvidence({ ...signed(payload), payload: { ...payload, resultOutcome: 'negative' } }, trust).status).toBe(
      'bad_signature',
    );
    expect(checkGateEvidence({ ...signed(payload), keyId: 'ed25519:' + '0'.repeat(24) }, trust).status).toBe('untrusted_key');
    expect(checkGateEvidence(signed(payload), undefined).status).toBe('no_trust_anchor');
    expect(checkGateEvidence(null, trust).status).toBe('absent');
  });
});
