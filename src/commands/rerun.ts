// The `next:` commands and hints of the workspace commands (review, projects, runs, generate) must run as printed.
// A credential given by flag (--api-key-file, --api-key-env) is not found again by a pasted command, which then
// fails with exit 6; so the flags that chose the credential and the service travel with every command printed. A
// credential from the defaults (LOOPSIGN_API_KEY_FILE, the config key apiKeyFile) needs nothing added. Nothing
// secret is carried: a file path, a variable's name, a chain id, a public origin.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { LoopsignError } from '../errors.js';
import type { CredentialOptions } from './define.js';
import type { GlobalFlags } from '../config.js';
import type { Context } from '../context.js';

const PLAIN = /^[A-Za-z0-9_@%+=:,./~-]+$/;
const quote = (s: string) => (PLAIN.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);

interface RerunOptions extends CredentialOptions, GlobalFlags {
  /** review wait / review result: the pinned review-gate key, carried only into those two commands. */
  trustedKeys?: string;
  gateKey?: string;
}

export interface RerunFlags {
  /** For every workspace command: the credential and service flags. */
  common: string;
  /** Also for `review wait` and `review result`, which judge evidence: the gate key's flags. */
  trust: string;
}

/** The flags to add to printed commands (each with a leading space, or ''). */
export function rerunFlags(o: RerunOptions): RerunFlags {
  const flags: string[] = [];
  if (typeof o.apiKeyFile === 'string') flags.push('--api-key-file', quote(path.resolve(o.apiKeyFile)));
  if (typeof o.apiKeyEnv === 'string' && /^[A-Za-z_][A-Za-z0-9_]*$/.test(o.apiKeyEnv)) flags.push('--api-key-env', o.apiKeyEnv);
  if (typeof o.chainId === 'string' && /^[0-9]{1,10}$/.test(o.chainId)) flags.push('--chain-id', o.chainId);
  if (typeof o.baseUrl === 'string' && /^https?:\/\/[A-Za-z0-9.:[\]-]+\/?$/.test(o.baseUrl)) flags.push('--base-url', o.baseUrl);
  const trust: string[] = [];
  if (typeof o.trustedKeys === 'string') trust.push('--trusted-keys', quote(path.resolve(o.trustedKeys)));
  if (typeof o.gateKey === 'string') trust.push('--gate-key', quote(existsSync(o.gateKey) ? path.resolve(o.gateKey) : o.gateKey)); // a pin file, or the pin itself
  const join = (f: string[]) => (f.length ? ` ${f.join(' ')}` : '');
  return { common: join(flags), trust: join(trust) };
}

// A workspace command inside a text: up to the closing backtick, or the end of the text.
const COMMAND = /(loopsign (review|projects|runs|generate)\b( [a-z]+)?[^`\n]*?)(`|$)/g;

/** `text` with the flags added to each workspace command it contains. */
export function carryFlags(text: string, flags: RerunFlags): string {
  if (flags.common === '' && flags.trust === '') return text;
  return text.replace(COMMAND, (_m, cmd: string, group: string, sub: string | undefined, end: string) => {
    const judges = group === 'review' && (sub === ' wait' || sub === ' result');
    return `${cmd.trimEnd()}${flags.common}${judges ? flags.trust : ''}${end}`;
  });
}

const none = (f: RerunFlags) => f.common === '' && f.trust === '';

/** Runs a workspace command's handler so that the hints of its errors carry the flags too. */
export async function carryingFlags<T>(flags: RerunFlags, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (!none(flags) && error instanceof LoopsignError && error.hint !== undefined) {
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
export function withRerun<O extends RerunOptions>(handler: AnyHandler<O>): AnyHandler<O> {
  return async (ctx, options, args) => {
    const flags = rerunFlags(options);
    if (none(flags)) return handler(ctx, options, args);
    const out = ctx.out;
    const result = out.result.bind(out);
    out.result = (data, text) => {
      const next = Array.isArray(data.next) ? { next: data.next.map((n) => (typeof n === 'string' ? carryFlags(n, flags) : n)) } : {};
      result(
        { ...data, ...next },
        typeof text === 'function' ? () => carryFlags(text(), flags) : text === undefined ? undefined : carryFlags(text, flags),
      );
    };
    try {
      return await carryingFlags(flags, () => handler(ctx, options, args));
    } finally {
      delete (out as { result?: unknown }).result;
    }
  };
}
