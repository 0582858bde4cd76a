// The browser session that the workspace evidence, audit and coverage routes authenticate (review.md §2.1, §2.5,
// §7.2): they read only the session cookie, never an API key. loopsign takes the cookie from a file or from an
// environment variable the user names — never from argv — and sends only that one cookie, only to the service.
// No message ever contains the cookie's value.
import { readBoundedFile } from '../bounded-read.js';
import { CredentialError, UsageError } from '../errors.js';
import type { Env } from '../env.js';

/** The service's cookie names: production, then other environments (packages/nextjs/lib/auth/session.ts). */
export const SESSION_COOKIE_NAMES = ['__Host-rateloop-session', 'rateloop-session'] as const;
export const SESSION_COOKIE_NAME = SESSION_COOKIE_NAMES[0];

export interface SessionCookieSource {
  file?: string;
  env?: string;
}

const HOW =
  'copy the __Host-rateloop-session cookie of a signed-in browser (a member with export rights) into a file only you can read and pass --session-cookie-file FILE, or put it in an environment variable and pass --session-cookie-env NAME';

// RFC 6265 cookie-octets; the service's own tokens are 43 base64url characters.
const COOKIE_VALUE = /^[\x21\x23-\x2B\x2D-\x3A\x3C-\x5B\x5D-\x7E]{16,4096}$/;
const MAX_FILE_BYTES = 16 * 1024;

/** The `Cookie` header for the evidence routes, from the user's file or the named variable of the run's environment `env`. */
export async function sessionCookieHeader(source: SessionCookieSource, env: Env): Promise<string> {
  if (source.file !== undefined && source.env !== undefined) {
    throw new UsageError('usage', 'give the session cookie once: --session-cookie-file or --session-cookie-env, not both');
  }
  if (source.env !== undefined) {
    // A cookie pasted where the name belongs must not be echoed: a name is shown only in the usual upper-case form.
    const shown = /^[A-Z_][A-Z0-9_]{0,63}$/.test(source.env)
      ? `the environment variable ${source.env}`
      : 'the environment variable named by --session-cookie-env';
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(source.env)) {
      throw new UsageError(
        'invalid_env_name',
        '--session-cookie-env takes the name of an environment variable (letters, digits, _), not its value',
        {
          hint: 'the cookie itself never goes on the command line',
        },
      );
    }
    const value = env[source.env];
    if (!value || !value.trim()) throw new CredentialError('session_cookie_missing', `${shown} is not set or empty`, { hint: HOW });
    return parseSessionCookie(value, shown);
  }
  if (source.file !== undefined) return parseSessionCookie(await readCookieFile(source.file), `the session cookie file ${source.file}`);
  throw new CredentialError(
    'session_cookie_required',
    'the workspace evidence, audit and coverage routes take a browser session cookie, not a workspace API key',
    {
      hint: HOW,
    },
  );
}

async function readCookieFile(file: string): Promise<string> {
  const bytes = await readBoundedFile(file, MAX_FILE_BYTES, (p) =>
    p.kind === 'unreadable'
      ? new CredentialError('session_cookie_unreadable', `cannot read the session cookie file ${file} (${p.code})`)
      : p.kind === 'too_large'
        ? new CredentialError('session_cookie_invalid', `the session cookie file ${file} is ${p.size} bytes; a cookie is one short line`)
        : new CredentialError('session_cookie_unreadable', `the session cookie file ${file} is not a file`),
  );
  return bytes.toString('utf8');
}

/**
 * Accepts the bare value, `name=value`, or a whole `Cookie:` header copied from a browser (other cookies in it are
 * dropped). Returns `name=value` for the session cookie only.
 */
export function parseSessionCookie(text: string, where: string): string {
  const line = text.trim().replace(/^cookie:\s*/i, '');
  const parts = line
    .split(';')
    .map((p) => p.trim())
    .filter(Boolean);
  let name: string = SESSION_COOKIE_NAME;
  let value: string | undefined;
  if (parts.length === 1 && !parts[0]!.includes('=')) value = parts[0];
  else {
    for (const wanted of SESSION_COOKIE_NAMES) {
      const hit = parts.find((p) => p.slice(0, p.indexOf('=')).trim() === wanted);
      if (hit) {
        name = wanted;
        value = hit.slice(hit.indexOf('=') + 1).trim();
        break;
      }
    }
    if (value === undefined)
      throw new CredentialError('session_cookie_invalid', `${where} holds no ${SESSION_COOKIE_NAMES.join(' or ')} cookie`, { hint: HOW });
  }
  if (!value || !COOKIE_VALUE.test(value)) {
    throw new CredentialError(
      'session_cookie_invalid',
      `${where} does not hold a usable session cookie value (16 to 4096 cookie characters, one line)`,
      { hint: HOW },
    );
  }
  return `${name}=${value}`;
}
