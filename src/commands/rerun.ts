// The `next:` commands and hints of the workspace commands (review, projects, runs, generate) must run as printed.
// A credential given by flag (--api-key-file, --api-key-env) is not found again by a pasted command, which then
// fails with exit 6; so the flags that chose the credential and the service travel with every command printed. A
// credential from the defaults (LOOPSIGN_API_KEY_FILE, the config key apiKeyFile) needs nothing added. Nothing
// secret is carried: a file path, a variable's name, a chain id, a public origin.
import path from 'node:path';
import { LoopsignError } from '../errors.js';
import type { CredentialOptions } from './define.js';
import type { GlobalFlags } from '../config.js';
import type { Context } from '../context.js';

const PLAIN = /^[A-Za-z0-9_@%+=:,./~-]+$/;
const quote = (s: string) => (PLAIN.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);

/** The flags to add to printed commands (with a leading space), or ''. */
export function rerunFlags(o: CredentialOptions & GlobalFlags): string {
  const flags: string[] = [];
  if (typeof o.apiKeyFile === 'string') flags.push('--api-key-file', quote(path.resolve(o.apiKeyFile)));
  if (typeof o.apiKeyEnv === 'string' && /^[A-Za-z_][A-Za-z0-9_]*$/.test(o.apiKeyEnv)) flags.push('--api-key-env', o.apiKeyEnv);
  if (typeof o.chainId === 'string' && /^[0-9]{1,10}$/.test(o.chainId)) flags.push('--chain-id', o.chainId);
  if (typeof o.baseUrl === 'string' && /^https?:\/\/[A-Za-z0-9.:[\]-]+\/?$/.test(o.baseUrl)) flags.push('--base-url', o.baseUrl);
  return flags.length ? ` ${flags.join(' ')}` : '';
}

// A workspace command inside a text: up to the closing backtick, or the end of the text.
const COMMAND = /(loopsign (?:review|projects|runs|generate)\b[^`\n]*?)(`|$)/g;

/** `text` with the flags added to each workspace command it contains. */
export function carryFlags(text: string, flags: string): string {
  return flags === '' ? text : text.replace(COMMAND, (_m, cmd: string, end: string) => `${cmd.trimEnd()}${flags}${end}`);
}

/** Runs a workspace command's handler so that the hints of its errors carry the flags too. */
export async function carryingFlags<T>(flags: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (flags !== '' && error instanceof LoopsignError && error.hint !== undefined) {
      (error as { hint: string | undefined }).hint = carryFlags(error.hint, flags);
    }
    throw error;
  }
}

type AnyHandler<O> = (ctx: Context, options: O, args: unknown[]) => Promise<void>;

/**
 * A workspace command's handler whose printed commands run as printed: its result's `next` commands, the commands
 * in its text, and its errors' hints carry the flags that chose the credential and the service.
 */
export function withRerun<O extends CredentialOptions & GlobalFlags>(handler: AnyHandler<O>): AnyHandler<O> {
  return async (ctx, options, args) => {
    const flags = rerunFlags(options);
    if (flags === '') return handler(ctx, options, args);
    const out = ctx.out;
    const result = out.result.bind(out);
    out.result = (data, text) => {
      const next = Array.isArray(data.next) ? { next: data.next.map((n) => (typeof n === 'string' ? carryFlags(n, flags) : n)) } : {};
      result({ ...data, ...next }, typeof text === 'function' ? () => carryFlags(text(), flags) : text === undefined ? undefined : carryFlags(text, flags));
    };
    try {
      return await carryingFlags(flags, () => handler(ctx, options, args));
    } finally {
      delete (out as { result?: unknown }).result;
    }
  };
}
