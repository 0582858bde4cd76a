// The small files a user names (a session cookie, a workspace API key, a review artifact) are read through one
// handle, and each refusal keeps its own code and words: missing, not a file, empty (artifacts), too large.
import { describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sessionCookieHeader } from '../src/evidence/session-cookie.js';
import { readCredential } from '../src/review/credential.js';
import { readArtifact } from '../src/review/artifacts.js';
import { LoopsignError } from '../src/errors.js';

const dir = mkdtempSync(path.join(tmpdir(), 'loopsign-bounded-'));
const file = (name: string, content: string | Buffer) => {
  const f = path.join(dir, name);
  writeFileSync(f, content);
  return f;
};
const folder = path.join(dir, 'a-folder');
mkdirSync(folder);
const missing = path.join(dir, 'missing');

async function refusal(p: Promise<unknown>): Promise<{ code: string; message: string; hint?: string }> {
  const e = await p.then(
    () => undefined,
    (error: unknown) => error,
  );
  expect(e).toBeInstanceOf(LoopsignError);
  const { code, message, hint } = e as LoopsignError;
  return { code, message, hint };
}

describe('reading a small file a user names', () => {
  it('the session cookie file', async () => {
    const read = (f: string) => sessionCookieHeader({ file: f }, {});
    expect(await refusal(read(missing))).toMatchObject({
      code: 'session_cookie_unreadable',
      message: `cannot read the session cookie file ${missing} (ENOENT)`,
    });
    expect(await refusal(read(folder))).toMatchObject({
      code: 'session_cookie_unreadable',
      message: `the session cookie file ${folder} is not a file`,
    });
    const big = file('cookie-big', 'x'.repeat(16 * 1024 + 1));
    expect(await refusal(read(big))).toMatchObject({
      code: 'session_cookie_invalid',
      message: `the session cookie file ${big} is 16385 bytes; a cookie is one short line`,
    });
    expect(await read(file('cookie', `__Host-rateloop-session=${'a'.repeat(43)}\n`))).toBe(`__Host-rateloop-session=${'a'.repeat(43)}`);
  });

  it('the workspace API key file', async () => {
    const read = (f: string) => readCredential({ apiKeyFile: f }, {});
    const r = await refusal(read(missing));
    expect(r).toMatchObject({ code: 'api_key_unreadable', message: `cannot read the key file ${missing} (ENOENT)` });
    expect(r.hint).toMatch(/--api-key-file FILE/);
    expect(await refusal(read(folder))).toMatchObject({ code: 'api_key_unreadable', message: `the key file ${folder} is not a file` });
    const big = file('key-big', 'x'.repeat(4097));
    expect(await refusal(read(big))).toMatchObject({
      code: 'api_key_invalid',
      message: `the key file ${big} is 4097 bytes; a key is one short line`,
    });
    const key = `rlk_${'0'.repeat(16)}_${'A'.repeat(43)}`;
    expect(await read(file('key', `${key}\n`))).toEqual({ kind: 'api_key', authorization: `Bearer ${key}` });
  });

  it('a review artifact', async () => {
    expect(await refusal(readArtifact(missing, '--source'))).toMatchObject({
      code: 'file_not_found',
      message: `--source ${missing} cannot be read (ENOENT)`,
    });
    expect(await refusal(readArtifact(folder, '--source'))).toMatchObject({
      code: 'not_a_file',
      message: `--source ${folder} is not a file`,
    });
    const empty = file('empty', '');
    expect(await refusal(readArtifact(empty, '--source'))).toMatchObject({
      code: 'empty_file',
      message: `--source ${empty} is empty; an artifact needs at least one byte`,
    });
    const big = file('big', Buffer.alloc(11));
    expect(await refusal(readArtifact(big, '--source', 10))).toMatchObject({
      code: 'file_too_large',
      message: `--source ${big} is 11 bytes; the service takes at most 10 MiB per artifact (and 64 KiB per request, base64 included)`,
    });
    expect(await readArtifact(file('ok', 'hello'), '--source')).toEqual(Buffer.from('hello'));
    expect((await readArtifact(file('exact', Buffer.alloc(10)), '--source', 10)).length).toBe(10);
  });
});
