// Downloading evidence: the public trusted keys, and workspace exports with the API key. Kept apart from the
// offline verifier so `verify-evidence` loads no HTTP client.
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { UsageError } from '../errors.js';
import { writeFileAtomically } from '../fsutil.js';
import { HttpClient } from '../service/http.js';
import { checkTrustedKeysDocument, type TrustedKey } from './keys.js';

export function evidenceHttp(baseUrl: string): HttpClient {
  // Exports can be far larger than a plan: the cap is the local reader's (files.ts EXPORT_MAX_BYTES), not 4 MiB.
  return new HttpClient({ baseUrl, retries: 3, maxBytes: 512 * 1024 * 1024 });
}

export async function downloadTrustedKeys(http: HttpClient): Promise<{ doc: Record<string, unknown>; keys: TrustedKey[] }> {
  const doc = await http.request({ method: 'GET', path: '/api/evidence/trusted-keys', idempotent: true });
  return { doc, keys: checkTrustedKeysDocument(doc) };
}

export function apiKeyHeaders(header: string | undefined): Record<string, string> {
  const key = process.env.LOOPSIGN_API_KEY;
  if (!key) {
    throw new UsageError('api_key_required', 'workspace exports need a workspace API key in LOOPSIGN_API_KEY', {
      hint: 'create one in Settings → Integrations; it is read only from the environment, never from argv',
    });
  }
  return header && header.toLowerCase() !== 'authorization' ? { [header]: key } : { authorization: `Bearer ${key}` };
}

export async function writeEvidence(out: string, doc: unknown): Promise<string> {
  const file = path.resolve(out);
  await fs.mkdir(path.dirname(file), { recursive: true });
  await writeFileAtomically(file, JSON.stringify(doc, null, 2) + '\n', 0o644);
  return file;
}
