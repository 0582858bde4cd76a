// `review create`: a private review (review.md §6.4). Everything is checked before anything is sent — the files,
// the profile and hash forms, the body's size against the 64 KiB cap, the idempotency key against the journal —
// then the project against `projects list`. The idempotency key is generated when absent and journaled with a digest
// of the exact request, so a rerun sends the identical body under the same key (the service answers with the stored
// review); the same key with another payload is refused here, as the service would refuse it. The answer's
// bindings must name what was asked: another project, profile or cohort is refused (exit 5).
import { createHash, randomBytes } from 'node:crypto';
import { RefusedError, ServiceError, UsageError } from '../errors.js';
import type { Store } from '../store/db.js';
import { Operation, operationId } from '../store/operation.js';
import { canonicalJson } from '../protocol/canonical.js';
import { objectField, type ServiceDoc } from '../service/doc.js';
import { detectMediaType, mediaTypeOption, readArtifact } from './artifacts.js';
import { ASSURANCE_SCHEMA, BODY_CAP, type AssuranceClient } from './assurance.js';
import { isId, serviceId, userId } from './ids.js';

export const PRIVATE_CLASSIFICATIONS = ['internal', 'confidential', 'restricted', 'regulated'] as const;
const IDEMPOTENCY_KEY = /^[A-Za-z0-9._:-]{8,160}$/;

export interface PrivateReviewInput {
  project?: string;
  integration?: string;
  profile?: string;
  profileHash?: string;
  cohort?: string;
  dataClassification?: string;
  source?: string;
  suggestion?: string;
  sourceType?: string;
  suggestionType?: string;
  idempotencyKey?: string;
}

/** An artifact as the request carries it. */
export type PrivateArtifact = { contentType: string; bytesBase64: string };

/** What a private review asks for (§6.4), without its idempotency key: what the key is bound to. */
export type PrivateReviewPayload = {
  integrationId: string;
  projectId: string;
  requestProfile: { id: string; version: number; hash: string };
  cohortId: string;
  dataClassification: string;
  source: PrivateArtifact;
  suggestion: PrivateArtifact;
};

/** The exact request body: the payload under its idempotency key. */
export type PrivateReviewBody = PrivateReviewPayload & { idempotencyKey: string };

export interface PreparedPrivateReview {
  body: PrivateReviewBody;
  /** sha256 of everything but the key: what the key is bound to. */
  payloadDigest: string;
  /** sha256 of the exact bytes sent. */
  bodyDigest: string;
  bodyBytes: number;
  keyGenerated: boolean;
}

const sha256 = (s: string) => `sha256:${createHash('sha256').update(s).digest('hex')}`;

function need(value: string | undefined, flag: string): string {
  if (value === undefined || value === '') throw new UsageError('usage', `review create needs ${flag}`);
  return value;
}

/** The request body, from the user's options and files (exit 2 on anything malformed). */
export async function privateReviewBody(o: PrivateReviewInput): Promise<PrivateReviewPayload> {
  const projectId = userId('project', need(o.project, '--project'), '--project');
  const integrationId = userId('configured', need(o.integration, '--integration'), '--integration');
  const m = /^(.+)@([1-9][0-9]{0,8})$/.exec(need(o.profile, '--profile <id>@<version>'));
  if (!m) throw new UsageError('invalid_profile', `--profile ${JSON.stringify(o.profile)} must be <id>@<version>, e.g. rrp_support@3`);
  const profileId = userId('configured', m[1], '--profile id');
  const hash = need(o.profileHash, '--profile-hash sha256:<hex>');
  if (!isId('sha256', hash))
    throw new UsageError(
      'invalid_profile_hash',
      `--profile-hash must be sha256: followed by 64 lower-case hex digits, got ${JSON.stringify(String(hash).slice(0, 80))}`,
    );
  const cohortId = userId('configured', need(o.cohort, '--cohort'), '--cohort');
  const cls = need(o.dataClassification, '--data-classification');
  if (!(PRIVATE_CLASSIFICATIONS as readonly string[]).includes(cls))
    throw new UsageError(
      'invalid_data_classification',
      `--data-classification must be one of ${PRIVATE_CLASSIFICATIONS.join(', ')} for a private review`,
    );
  const artifact = async (file: string | undefined, flag: string, typeFlag: string, type: string | undefined) => {
    const bytes = await readArtifact(need(file, flag), flag);
    return {
      contentType: type !== undefined ? mediaTypeOption(type, typeFlag) : detectMediaType(bytes),
      bytesBase64: bytes.toString('base64'),
    };
  };
  return {
    integrationId,
    projectId,
    requestProfile: { id: profileId, version: Number(m[2]), hash },
    cohortId,
    dataClassification: cls,
    source: await artifact(o.source, '--source', '--source-type', o.sourceType),
    suggestion: await artifact(o.suggestion, '--suggestion', '--suggestion-type', o.suggestionType),
  };
}

/** The exact body with its key, and its size checked against the cap before anything else happens. */
export function withKey(payload: PrivateReviewPayload, idempotencyKey: string, keyGenerated: boolean): PreparedPrivateReview {
  const body: PrivateReviewBody = { idempotencyKey, ...payload };
  const text = JSON.stringify(body);
  const bodyBytes = Buffer.byteLength(text);
  if (bodyBytes > BODY_CAP) {
    throw new UsageError(
      'body_too_large',
      `the private review would send ${bodyBytes} bytes; the service accepts at most ${BODY_CAP} (64 KiB) per request, base64 included`,
      {
        hint: 'shorten the artifacts (about 48 KiB of files in all fit)',
        details: { bodyBytes, limit: BODY_CAP },
      },
    );
  }
  return { body, payloadDigest: sha256(canonicalJson(payload)), bodyDigest: sha256(text), bodyBytes, keyGenerated };
}

export interface CreatedPrivateReview {
  /** The service's answer as it came (printed under `service`). */
  doc: ServiceDoc;
  privateReviewId: string;
  status: string;
  responseDeadline: string;
  idempotencyKey: string;
  keyGenerated: boolean;
  /** The journal already held this request (a rerun). */
  rerun: boolean;
  bodyBytes: number;
}

/** The answer must be the review that was asked for (§6.4 response). */
export function checkPrivateReviewResponse(
  doc: ServiceDoc,
  body: PrivateReviewPayload,
): { privateReviewId: string; status: string; responseDeadline: string } {
  if (doc.schemaVersion !== ASSURANCE_SCHEMA)
    throw new ServiceError('invalid_response', `the private review answer has schemaVersion ${JSON.stringify(doc.schemaVersion)}`);
  const privateReviewId = serviceId('privateReview', doc.privateReviewId, 'a privateReviewId');
  const b = objectField(doc, 'bindings');
  const rp = objectField(b, 'requestProfile') ?? {};
  const asked = body.requestProfile;
  const project = objectField(b, 'project')?.projectId;
  const cohort = objectField(b, 'cohort')?.cohortId;
  const mismatch: string[] = [];
  if (project !== body.projectId) mismatch.push(`project ${String(project)} (asked ${body.projectId})`);
  if (rp.id !== asked.id || rp.version !== asked.version || rp.hash !== asked.hash)
    mismatch.push(
      `request profile ${String(rp.id)}@${String(rp.version)} ${String(rp.hash)} (asked ${asked.id}@${asked.version} ${asked.hash})`,
    );
  if (cohort !== body.cohortId) mismatch.push(`cohort ${String(cohort)} (asked ${body.cohortId})`);
  if (mismatch.length > 0)
    throw new RefusedError('binding_mismatch', `the service's answer binds the review to another ${mismatch.join(' and ')}: refused`, {
      details: { privateReviewId, mismatch },
    });
  const status = (['ready_for_assignment', 'awaiting_owner_rebind'] as const).find((s) => s === doc.status);
  if (status === undefined)
    throw new ServiceError('invalid_response', `the private review status ${JSON.stringify(doc.status)} is not one the service documents`);
  const { responseDeadline } = doc;
  if (typeof responseDeadline !== 'string' || Number.isNaN(Date.parse(responseDeadline)))
    throw new ServiceError('invalid_response', 'the private review has no responseDeadline timestamp');
  const artifacts = objectField(doc, 'artifacts');
  for (const a of ['sourceArtifactId', 'suggestionArtifactId']) serviceId('artifact', artifacts?.[a], `artifacts.${a}`);
  return { privateReviewId, status, responseDeadline };
}

/**
 * Local checks first (files, forms, size, the key against the journal), then the credential (`open`), the project
 * list and the request.
 */
export async function createPrivateReview(
  store: Store,
  baseUrl: string,
  open: () => Promise<AssuranceClient>,
  input: PrivateReviewInput,
): Promise<CreatedPrivateReview> {
  const payload = await privateReviewBody(input);
  const payloadDigest = sha256(canonicalJson(payload));
  let key = input.idempotencyKey;
  if (key !== undefined && !IDEMPOTENCY_KEY.test(key))
    throw new UsageError('invalid_idempotency_key', '--idempotency-key must be 8 … 160 letters, digits or ._:-');
  let keyGenerated = false;
  if (key === undefined) {
    // A rerun of the same request reuses the key generated for it the first time.
    const index = await Operation.open(store, 'private-review-payload', operationId('private-review-payload', [baseUrl, payloadDigest]), {
      chainId: 0,
      wallet: '',
      data: { baseUrl, payloadDigest },
    });
    try {
      if (typeof index.data.idempotencyKey !== 'string')
        await index.save({ idempotencyKey: `loopsign-${randomBytes(16).toString('hex')}` });
      key = index.data.idempotencyKey!;
      keyGenerated = true;
    } finally {
      await index.close();
    }
  }
  const prepared = withKey(payload, key, keyGenerated);
  const journal = await Operation.open(
    store,
    'private-review',
    operationId('private-review', [baseUrl, Buffer.from(key).toString('hex')]),
    { chainId: 0, wallet: '', data: { baseUrl, idempotencyKey: key, payloadDigest } },
  );
  try {
    if (journal.data.payloadDigest !== payloadDigest) {
      throw new UsageError(
        'idempotency_key_reused',
        `--idempotency-key ${key} was already used for another private review (other files or settings); the service would refuse it`,
        {
          hint: 'reuse a key only for the identical request; leave --idempotency-key out to have one generated',
          details: { idempotencyKey: key },
        },
      );
    }
    // A fresh journal starts at step 'created'; any other step means this request was prepared before.
    const rerun = journal.step !== 'created';
    await journal.setStep('prepared', { projectId: payload.projectId, bodyDigest: prepared.bodyDigest, bodyBytes: prepared.bodyBytes });
    const client = await open();
    const list = await client.listProjects();
    if (!list.projects.some((p) => p.projectId === payload.projectId)) {
      throw new UsageError('unknown_project', `project ${payload.projectId} is not one \`projects list\` returns for this key`, {
        hint: 'run `loopsign projects list` and use one of its projects',
      });
    }
    await journal.setStep('sending');
    const doc = await client.createPrivateReview(prepared.body);
    const checked = checkPrivateReviewResponse(doc, prepared.body);
    await journal.setStep('answered', {
      privateReviewId: checked.privateReviewId,
      status: checked.status,
      responseDeadline: checked.responseDeadline,
    });
    return { doc, ...checked, idempotencyKey: key, keyGenerated, rerun, bodyBytes: prepared.bodyBytes };
  } finally {
    await journal.close();
  }
}
