// loopsign verify-evidence | evidence keys | evidence pin | evidence fetch (docs/evidence.md)
import type { Context } from '../context.js';
import { UsageError } from '../errors.js';
import * as ev from '../evidence/files.js';
import type { Check } from '../evidence/packet.js';
import { pinFileText, type TrustedKey } from '../evidence/keys.js';
import type { TrustOptions } from './define.js';
import type { EvidenceFetchOptions, EvidenceKeysOptions, EvidencePinOptions, VerifyEvidenceOptions } from './evidence.def.js';

const trustOf = (o: TrustOptions): ev.PacketTrust => ({
  publicKey: o.publicKey,
  keyId: o.keyId,
  trustedKeys: o.trustedKeys,
});

function renderChecks(checks: Check[]): string {
  const mark = { pass: 'ok  ', fail: 'FAIL', skipped: 'skip', info: 'info' } as const;
  return checks
    .map((c) => {
      let line = `  ${mark[c.status]}  ${c.label}`;
      if (c.status !== 'pass' && c.expected !== undefined)
        line += `\n          expected ${JSON.stringify(c.expected)}\n          actual   ${JSON.stringify(c.actual)}`;
      if (c.detail) line += `\n          ${c.detail}`;
      return line;
    })
    .join('\n');
}

function render(outcome: ev.VerifyOutcome): string {
  // Narrowed by kind: each verifier's own result type, no field read that its type lacks.
  const r = outcome.result;
  const head = `${outcome.kind}: ${r.valid ? 'VALID' : 'INVALID'}${r.errors.length ? ` (${r.errors.join(', ')})` : ''}`;
  if (outcome.kind === 'packet') return `${head}\n  digest ${outcome.result.packetDigest ?? 'n/a'}\n${renderChecks(outcome.result.checks)}`;
  if (outcome.kind === 'audit') {
    const r = outcome.result;
    const broken = r.sequence
      ? `\n  first broken link: event ${r.sequence}${r.detail ? ` (${r.detail})` : ''}`
      : r.detail
        ? `\n  ${r.detail}`
        : '';
    return `${head}\n  events ${r.eventCount ?? 'n/a'}, head ${r.headDigest ?? 'n/a'}${broken}`;
  }
  const c = outcome.result;
  return `${head}\n  exportDigest ${c.exportDigest ?? 'n/a'}${c.expected ? ` (recomputed ${c.expected})` : ''}`;
}

export async function verifyEvidence(ctx: Context, options: VerifyEvidenceOptions, args: unknown[]): Promise<void> {
  const packetFile = args[0] as string | undefined;
  const audit = options.audit;
  const coverage = options.coverage;
  const given = [packetFile, audit, coverage].filter((x) => x !== undefined);
  if (given.length !== 1) throw new UsageError('usage', 'give one file: a PACKET, or --audit EXPORT, or --coverage EXPORT');
  const file = given[0]!;
  const outcome = await ev.verifyEvidenceFile(
    file,
    audit ? 'audit' : coverage ? 'coverage' : undefined,
    trustOf(options),
    options.expectedHead,
  );
  ctx.out.result(evidenceDocument(ctx, outcome), () => render(outcome));
}

/** The document `verify-evidence --json` prints (and `loopsign_verify_evidence` returns), or the error both give (exit 8). */
export function evidenceDocument(ctx: Context, outcome: ev.VerifyOutcome): Record<string, unknown> {
  if (!outcome.result.valid) {
    const error = ev.invalidError(outcome);
    ctx.out.note(render(outcome));
    throw error;
  }
  return { kind: outcome.kind, ...outcome.result };
}

async function serviceHttp(ctx: Context) {
  const config = await ctx.config();
  const { resolveChain, assertSandboxRunning } = await import('../chains/index.js');
  const chain = await resolveChain(config, ctx.env, ctx.paths);
  assertSandboxRunning(chain.chain);
  const { DEFAULT_BASE_URL } = await import('../service/client.js');
  const dl = await import('../evidence/download.js');
  return { http: dl.evidenceHttp(chain.baseUrl.value ?? DEFAULT_BASE_URL), config, dl };
}

function keyTable(keys: TrustedKey[]): string {
  return keys.map((k) => `${k.keyId}  ${k.algorithm.padEnd(12)} ${k.status.padEnd(8)} ${k.uses.join(',')}`).join('\n');
}

export async function evidenceKeys(ctx: Context, options: EvidenceKeysOptions): Promise<void> {
  const out = options.out;
  if (out) await ev.checkEvidenceOut(out, options.force === true);
  const { http, dl } = await serviceHttp(ctx);
  const { doc, keys } = await dl.downloadTrustedKeys(http);
  const written = out ? await ev.saveEvidenceText(out, JSON.stringify(doc, null, 2) + '\n', options.force === true) : undefined;
  ctx.out.result({ keys, ...(written ? { written } : {}) }, () => keyTable(keys) + (written ? `\nwrote ${written}` : ''));
}

export async function evidencePin(ctx: Context, options: EvidencePinOptions): Promise<void> {
  const keyId = String(options.keyId);
  await ev.checkEvidenceOut(options.out, options.force === true);
  let keys: TrustedKey[];
  if (typeof options.trustedKeys === 'string') keys = await ev.trustedKeysFrom(options.trustedKeys);
  else {
    const { http, dl } = await serviceHttp(ctx);
    keys = (await dl.downloadTrustedKeys(http)).keys;
  }
  const key = keys.find((k) => k.keyId === keyId);
  if (!key) throw new UsageError('unknown_key', `no trusted key ${keyId}`, { hint: `known: ${keys.map((k) => k.keyId).join(', ')}` });
  const out = await ev.saveEvidenceText(options.out, pinFileText(key.publicKeySpki), options.force === true);
  ctx.out.result({ keyId, status: key.status, pin: out }, () => `wrote the ${key.status} key ${keyId} to ${out}`);
}

export async function evidenceFetch(ctx: Context, options: EvidenceFetchOptions, args: unknown[]): Promise<void> {
  const [what, runId] = args as [string, string | undefined];
  if (what !== 'run' && what !== 'audit' && what !== 'coverage')
    throw new UsageError('usage', `evidence fetch takes run RUN_ID, audit or coverage, not ${what}`);
  const trust = trustOf(options);
  const force = options.force === true;
  if (what === 'run') ev.requireTrust(trust);
  const { http, dl } = await serviceHttp(ctx);
  const route = dl.evidenceRoute({ what, runId, workspace: String(options.workspace), from: options.from, to: options.to });
  const out = options.out ?? route.defaultName;
  await ev.checkEvidenceOut(out, force);
  const { sessionCookieHeader } = await import('../evidence/session-cookie.js');
  const cookie = await sessionCookieHeader({ file: options.sessionCookieFile, env: options.sessionCookieEnv }, ctx.env);
  const fetched = await dl.fetchEvidence(http, route, cookie);
  const { outcome, mismatch } = await dl.verifyFetched(fetched, trust, options.expectedHead);
  if (!outcome.result.valid) {
    if (!ctx.out.json) process.stderr.write(render(outcome) + '\n');
    throw ev.invalidError(outcome, mismatch);
  }
  const written = await ev.saveEvidenceText(out, JSON.stringify(fetched.doc, null, 2) + '\n', force);
  ctx.out.result({ kind: outcome.kind, written, ...outcome.result }, () => `${render(outcome)}\nwrote ${written}`);
}
