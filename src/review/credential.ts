// The workspace credential (review.md §2): a workspace API key `rlk_<16 hex>_<32–128 base64url>` or a connected
// agent's OAuth access token `rlo_at_…`, read from a file or from an environment variable the user names — never
// from argv — and checked for its form before anything is sent. Its value never appears in a message, a journal or
// the output; `Authorization: Bearer` is built here and nowhere else.
import { readBoundedFile } from '../bounded-read.js';
import type { CredentialCode, ServiceWord } from '../error-codes.js';
import { CredentialError, UsageError } from '../errors.js';
import type { Env } from '../env.js';

export const API_KEY = /^rlk_[a-f0-9]{16}_[A-Za-z0-9_-]{32,128}$/;
// `Bearer` + one space + 32–256 characters of [A-Za-z0-9_-] (agentOAuth.ts), issued as rlo_at_ + base64url.
export const AGENT_TOKEN = /^rlo_at_[A-Za-z0-9_-]{25,249}$/;

export type CredentialKind = 'api_key' | 'agent_token';

export interface CredentialSource {
  apiKeyFile?: string;
  apiKeyEnv?: string;
  /** Where a default apiKeyFile came from (LOOPSIGN_API_KEY_FILE, the config key), for messages. */
  from?: string;
}

export interface Credential {
  kind: CredentialKind;
  /** The Authorization header value. Never print it. */
  readonly authorization: string;
}

const HOW =
  'put the workspace API key (rlk_…, from the workspace settings) in a file only you can read and pass --api-key-file FILE (or set LOOPSIGN_API_KEY_FILE, or the config key apiKeyFile, to its path), or in an environment variable and pass --api-key-env NAME';
const MAX_FILE_BYTES = 4096;

function kindName(kind: CredentialKind): string {
  return kind === 'api_key' ? 'a workspace API key (rlk_<16 hex>_<32–128 base64url>)' : 'a connected agent token (rlo_at_…)';
}

/**
 * The credential, checked for its form; `accepts` lists what the route takes (the assurance routes take only API keys).
 * `env` is the run's environment, where --api-key-env's variable is read.
 */
export async function readCredential(
  source: CredentialSource,
  env: Env,
  accepts: CredentialKind[] = ['api_key', 'agent_token'],
): Promise<Credential> {
  if (source.apiKeyFile !== undefined && source.apiKeyEnv !== undefined)
    throw new UsageError('usage', 'give the credential once: --api-key-file or --api-key-env, not both');
  let text: string;
  let where: string;
  if (source.apiKeyEnv !== undefined) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(source.apiKeyEnv)) {
      // A key pasted where the name belongs is not echoed.
      throw new UsageError(
        'invalid_env_name',
        '--api-key-env takes the NAME of an environment variable (letters, digits, _), not its value',
        { hint: 'the key itself never goes on the command line' },
      );
    }
    where = /^[A-Z_][A-Z0-9_]{0,63}$/.test(source.apiKeyEnv)
      ? `the environment variable ${source.apiKeyEnv}`
      : 'the environment variable named by --api-key-env';
    const value = env[source.apiKeyEnv];
    if (!value || !value.trim()) throw new CredentialError('api_key_missing', `${where} is not set or empty`, { hint: HOW });
    text = value;
  } else if (source.apiKeyFile !== undefined) {
    where = `the key file ${source.apiKeyFile}${source.from ? ` (from ${source.from})` : ''}`;
    text = await readKeyFile(source.apiKeyFile);
  } else {
    throw new CredentialError('api_key_required', 'the workspace review commands need the workspace API key (or a connected agent token)', {
      hint: HOW,
    });
  }
  const value = text.trim();
  const kind: CredentialKind | undefined = API_KEY.test(value) ? 'api_key' : AGENT_TOKEN.test(value) ? 'agent_token' : undefined;
  if (!kind)
    throw new CredentialError(
      'api_key_invalid',
      `${where} does not hold a workspace API key (rlk_<16 hex>_<32–128 base64url>) or an agent token (rlo_at_…)`,
      { hint: HOW },
    );
  if (!accepts.includes(kind)) {
    throw new CredentialError(
      'credential_not_accepted',
      `${where} holds ${kindName(kind)}, but this route takes only ${accepts.map(kindName).join(' or ')}`,
      { hint: HOW },
    );
  }
  return { kind, authorization: `Bearer ${value}` };
}

async function readKeyFile(file: string): Promise<string> {
  const bytes = await readBoundedFile(file, MAX_FILE_BYTES, (p) =>
    p.kind === 'unreadable'
      ? new CredentialError('api_key_unreadable', `cannot read the key file ${file} (${p.code})`, { hint: HOW })
      : p.kind === 'too_large'
        ? new CredentialError('api_key_invalid', `the key file ${file} is ${p.size} bytes; a key is one short line`)
        : new CredentialError('api_key_unreadable', `the key file ${file} is not a file`),
  );
  return bytes.toString('utf8');
}

/**
 * A refusal of the credential, as the user should read it: which scope is missing and how to get it. The scope comes
 * from the service's message ("This credential lacks <scope>.") or a WWW-Authenticate challenge's scope list.
 */
export function credentialRefused(
  code: CredentialCode | ServiceWord,
  status: number,
  message: string,
  challenge?: string,
): CredentialError {
  const lacks = /lacks ([a-z]+:[a-z]+)/.exec(message)?.[1];
  const scopes = challenge ? /scope="([^"]*)"/.exec(challenge)?.[1] : undefined;
  if (code === 'insufficient_scope' && lacks) {
    return new CredentialError('insufficient_scope', `the credential lacks the scope ${lacks} (HTTP ${status})`, {
      hint: `create a workspace API key that includes ${lacks} (workspace settings → API keys; a key made without a scope list has all six), or reconnect the agent granting ${lacks}`,
      details: { status, scope: lacks },
    });
  }
  const wanted = scopes ? `; the service asks for a credential with the scopes ${scopes}` : '';
  const hints: Record<string, string> = {
    invalid_api_key: 'the key is unknown, malformed, revoked or of an inactive workspace: create a new one in the workspace settings',
    api_key_expired: 'the key has expired: create a new one in the workspace settings',
    workspace_api_key_required: 'this route takes a workspace API key (rlk_…) as Authorization: Bearer',
    invalid_agent_credential:
      'the workspace MCP endpoint takes the approved agent integration key or a connected agent token: check that the owner approved this agent',
    agent_integration_inactive: 'the key has no active agent integration: use the approved integration key',
    insufficient_role: 'the key belongs to a billing member: use a key of an owner, admin or member',
    private_review_integration_binding_mismatch:
      "private reviews take the integration's own key: use the key the owner approved for this integration",
    agent_pairing_not_approved: 'ask the workspace owner to approve the agent (the pairing lives 10 minutes), then run the command again',
  };
  return new CredentialError(
    code,
    `the service did not accept the credential (HTTP ${status} ${code}): ${message.replace(/\.$/, '')}${wanted}`,
    {
      hint: hints[code] ?? (scopes ? `reconnect the agent granting ${scopes}, or use the approved integration key` : HOW),
      details: { status, ...(scopes ? { scopes: scopes.split(' ') } : {}) },
    },
  );
}
