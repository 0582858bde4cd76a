// The output contract (docs/cli.md):
// - with --json, stdout carries exactly one JSON document: {"ok":true,...} or {"ok":false,"error":{...}};
//   progress goes to stderr as one JSON line per event;
// - without --json, readable text on stdout, progress on stderr (a spinner on a TTY of a sane width, see canSpin);
// - colours only on a TTY and never under NO_COLOR;
// - human-mode text is made inert (terminal controls shown as escapes) before loopsign's own colours are applied;
// - URLs that may carry credentials (RPC URLs) are shown as scheme and host only, in every mode.
import { randomBytes } from 'node:crypto';
import { styleText } from 'node:util';
import { LoopsignError, asKnownError, exitCodeOf, ExitCode } from './errors.js';
import type { Env } from './env.js';
import { forCli } from './hints.js';

export interface OutputOptions {
  json: boolean;
  quiet: boolean;
  debug: boolean;
}

export interface Streams {
  stdout: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  stderr: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
}

/** Narrower than this, a spinner's line cannot be redrawn in place: plain progress lines instead. */
export const MIN_SPINNER_COLUMNS = 20;

/**
 * Whether a spinner may redraw its line on this stream: a TTY that reports a sane width, on a terminal that can move
 * the cursor. A pseudo-terminal without a size (under `script`, some CI runners) reports 0 columns, which made the
 * spinner's line count infinite: it redrew without end and blocked the event loop, so even SIGTERM went unanswered.
 */
export function canSpin(stream: Streams['stderr'], env: Env): boolean {
  if (stream.isTTY !== true) return false;
  if (env.TERM === 'dumb' || env.CI !== undefined) return false;
  const columns = stream.columns;
  return typeof columns === 'number' && Number.isFinite(columns) && columns >= MIN_SPINNER_COLUMNS;
}

// Keys whose values are secrets or bearer material. They never reach output, whatever the command returns.
const SECRET_KEYS = /^(privateKey|password|secret|webhookSecret|token|handoffToken|cookieValue|cookieHeader|apiKey|mnemonic)$/i;

export function redact<T>(value: T): T {
  if (Array.isArray(value)) return value.map((v) => redact(v)) as T;
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = SECRET_KEYS.test(k) && v != null ? '[redacted]' : redact(v);
    return out as T;
  }
  return value;
}

const RESERVED_KEYS = ['ok', 'error'] as const;

const OPERATION_KEY = /^0x[0-9a-fA-F]{64}$/;
const WORD = /^[a-z][a-z0-9_]{0,63}$/;

/**
 * A service document as a command's result: a few fields loopsign checked for their exact form (operationKey,
 * status, ready, terminal) at the top, the document itself, untouched, under `service`. Fields that fail their
 * form are left out of the summary (they stay visible, unchecked, in `service`).
 */
export function serviceDocument(doc: unknown, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const d = (doc !== null && typeof doc === 'object' && !Array.isArray(doc) ? doc : {}) as Record<string, unknown>;
  const summary: Record<string, unknown> = {};
  if (typeof d.operationKey === 'string' && OPERATION_KEY.test(d.operationKey)) summary.operationKey = d.operationKey.toLowerCase();
  if (typeof d.status === 'string' && WORD.test(d.status)) summary.status = d.status;
  if (typeof d.ready === 'boolean') summary.ready = d.ready;
  if (typeof d.terminal === 'boolean') summary.terminal = d.terminal;
  return { ...summary, ...extra, service: doc };
}

// Text from the service can carry terminal controls: ESC [2K erases the line above, \r overwrites the current one,
// OSC sequences set titles, hyperlinks or the clipboard, bidi overrides reorder what is shown. In human output every
// such character becomes a visible escape (\u001b, \r …), so the rest of the sequence is plain printable text.
// Newlines stay in results (multi-line by design) and are escaped in one-line messages (errors, hints, progress).
const CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
const CONTROLS_AND_NEWLINES = /[\u0000-\u0008\u000a-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

function escapeControl(c: string): string {
  if (c === '\r') return '\\r';
  if (c === '\n') return '\\n';
  return `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

/** Terminal-inert text: every control character (but tab, and newline unless oneLine) shown as an escape. */
export function inert(text: string, oneLine = false): string {
  return text.replace(oneLine ? CONTROLS_AND_NEWLINES : CONTROLS, escapeControl);
}

// URLs whose path, query or userinfo may hold an API key (RPC URLs), registered by config.ts: every byte written
// goes through hideUrls, so no message, stack trace or JSON document can show them.
const hidden: Array<[needle: string, replacement: string]> = [];

/** scheme://host[:port], plus "/…" when the URL has more (path, query, credentials are never shown). */
export function redactUrl(raw: string): string {
  try {
    const u = new URL(raw);
    const more = u.username !== '' || u.password !== '' || u.pathname.length > 1 || u.search !== '' || u.hash !== '';
    return `${u.protocol}//${u.host}${more ? '/…' : ''}`;
  } catch {
    return '[url]';
  }
}

export function hideUrlInOutput(raw: string): void {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return;
  }
  const shown = redactUrl(raw);
  if (!shown.endsWith('/…')) return; // nothing beyond scheme and host
  const needles: Array<[string, string]> = [
    [raw, shown],
    [u.href, shown],
    [u.href.replace(/\/$/, ''), shown],
  ];
  // The secret parts alone too (a library may print the path or the key without the host). Short parts such as
  // "/rpc" are not secrets and would garble other text.
  for (const part of [
    `${u.pathname}${u.search}${u.hash}`,
    `${u.pathname}${u.search}`,
    u.pathname,
    u.search,
    u.hash,
    decodeURIComponent(u.username),
    decodeURIComponent(u.password),
    u.username,
    u.password,
  ]) {
    if (part.length >= 8) needles.push([part, '[redacted]']);
  }
  for (const n of needles) if (!hidden.some(([x]) => x === n[0])) hidden.push(n);
  hidden.sort((a, b) => b[0].length - a[0].length);
}

export function hideUrls(text: string): string {
  let out = text;
  for (const [needle, replacement] of hidden) if (out.includes(needle)) out = out.split(needle).join(replacement);
  return out;
}

// JSON.stringify escapes C0 controls but leaves DEL, C1 controls (U+009B is an 8-bit CSI), line separators and bidi
// overrides raw; escaped too, the document means the same and stays inert if a person pipes it to a terminal.
const JSON_RAW_CONTROLS = /[\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/** A service word (an error code, a recoverWith action, a next action) in its documented form, or undefined: never free text. */
export function serviceWord(value: unknown): string | undefined {
  return typeof value === 'string' && WORD.test(value) ? value : undefined;
}

export function jsonText(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)).replace(
    JSON_RAW_CONTROLS,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

export type Style = Parameters<typeof styleText>[0];

export interface Spinner {
  update(message: string): void;
  succeed(message?: string): void;
  fail(message?: string): void;
  stop(): void;
}

export class Output {
  private written = false;
  private activeSpinner: Spinner | undefined;
  // style() hands out placeholders that only this process can make; they become colours after the text around
  // them has been made inert, so loopsign's colours survive and a service's escape sequences do not.
  private readonly styleToken = randomBytes(8).toString('hex');
  private readonly styled = new Map<string, string>();

  constructor(
    readonly options: OutputOptions,
    private readonly streams: Streams = { stdout: process.stdout, stderr: process.stderr },
    /** The run's environment (NO_COLOR, TERM, CI): the CLI passes the process's; without one, none is set. */
    private readonly env: Env = {},
  ) {}

  get json(): boolean {
    return this.options.json;
  }

  /** Colour text for stdout when it is a TTY and NO_COLOR is unset. */
  style(style: Style, text: string, stream: 'stdout' | 'stderr' = 'stdout'): string {
    const tty = this.streams[stream].isTTY === true;
    if (!tty || this.env.NO_COLOR !== undefined || this.env.TERM === 'dumb') return text;
    const placeholder = `\uE000${this.styleToken}.${this.styled.size}\uE001`;
    // Whether to colour was decided above, for this stream; styleText would otherwise look at process.stdout.
    this.styled.set(placeholder, styleText(style, inert(text), { validateStream: false }));
    return placeholder;
  }

  /** Human-mode text as it reaches the terminal: inert, then loopsign's own colours. */
  private human(text: string, oneLine = false): string {
    let out = inert(text, oneLine);
    if (this.styled.size > 0 && out.includes(`\uE000${this.styleToken}.`)) {
      for (const [placeholder, value] of this.styled) out = out.split(placeholder).join(value);
    }
    return out;
  }

  /** Every byte goes out here: credential-bearing URLs are hidden whatever the mode. */
  private write(stream: 'stdout' | 'stderr', text: string): void {
    this.streams[stream].write(hideUrls(text));
  }

  /** A free-form human line on stderr (lists, per-file reports); nothing under --json. */
  note(text: string): void {
    if (this.options.json) return;
    this.write('stderr', this.human(text) + '\n');
  }

  /**
   * The command's one result. `text` renders it for people; JSON mode prints the data itself beside `ok: true`.
   * The envelope's own keys can never come from the data: a service document is passed under `service`
   * (see serviceDocument), so whatever it says cannot forge `ok`, `error` or a loopsign field.
   */
  result(data: Record<string, unknown>, text?: string | (() => string)): void {
    if (this.written) throw new Error('output: a command may print only one result');
    for (const key of RESERVED_KEYS) if (key in data) throw new Error(`output: a result may not carry the envelope key "${key}"`);
    this.written = true;
    this.stopSpinner();
    if (this.options.json) {
      this.write('stdout', jsonText({ ok: true, ...redact(data) }) + '\n');
      return;
    }
    const rendered = this.human(typeof text === 'function' ? text() : (text ?? defaultText(redact(data))));
    if (rendered.length > 0) this.write('stdout', rendered.endsWith('\n') ? rendered : rendered + '\n');
  }

  /** Render a failure. Returns the exit code to use. */
  error(error: unknown): number {
    this.stopSpinner();
    // A foreign error loopsign knows (an RPC failure from viem) is taken for what it is once, for both.
    const known = asKnownError(error);
    const code = exitCodeOf(known);
    // On the command line: loopsign's commands, never a tool name of the service (src/hints.ts).
    const raw = errorBody(known, this.options.debug);
    const body = { ...raw, message: forCli(raw.message), ...(raw.hint === undefined ? {} : { hint: forCli(raw.hint) }) };
    if (this.options.json && !this.written) {
      this.written = true;
      this.write('stdout', jsonText({ ok: false, error: body }) + '\n');
    } else if (this.options.json) {
      // The one document is out already (a result, then a failure after it): stderr keeps to JSON lines.
      this.write('stderr', jsonText({ event: 'error', message: body.message, error: body }) + '\n');
    } else {
      let line = `${this.style('red', 'error:', 'stderr')} ${inert(body.message, true)}`;
      if (body.hint) line += `\n${this.style('dim', 'hint:', 'stderr')} ${inert(body.hint, true)}`;
      this.write('stderr', this.human(line) + '\n');
    }
    if (this.options.debug && error instanceof Error && error.stack) {
      this.write('stderr', this.human(error.stack) + '\n');
      if (error.cause instanceof Error && error.cause.stack) this.write('stderr', this.human(`cause: ${error.cause.stack}`) + '\n');
    }
    return code;
  }

  /** A progress event: a JSON line on stderr under --json, else a plain line (unless --quiet). */
  progress(event: string, message: string, data: Record<string, unknown> = {}): void {
    if (this.options.json) {
      this.write('stderr', jsonText({ event, message, ...redact(data) }) + '\n');
      return;
    }
    if (this.options.quiet) return;
    if (this.activeSpinner) {
      this.activeSpinner.update(message);
      return;
    }
    this.write('stderr', this.human(`${this.style('dim', '•', 'stderr')} ${inert(message, true)}`) + '\n');
  }

  warn(message: string, data: Record<string, unknown> = {}): void {
    if (this.options.json) {
      this.write('stderr', jsonText({ event: 'warning', message, ...redact(data) }) + '\n');
      return;
    }
    this.write('stderr', this.human(`${this.style('yellow', 'warning:', 'stderr')} ${inert(message, true)}`) + '\n');
  }

  /** A spinner on a TTY of a sane width (canSpin); progress lines otherwise. ora is loaded only for a real spinner. */
  async spinner(event: string, message: string): Promise<Spinner> {
    const stderr = this.streams.stderr;
    if (!this.options.json && !this.options.quiet && canSpin(stderr, this.env)) {
      const { default: ora } = await import('ora');
      const clean = (m: string | undefined) => (m === undefined ? undefined : hideUrls(inert(m, true)));
      // stdin stays as it is: ora's default (discardStdin) puts the terminal in raw mode, where Ctrl-C is a byte, not
      // SIGINT, and the byte is never read (stdin is not flowing), so Ctrl-C did nothing until the wait ended.
      const s = ora({ text: clean(message), stream: stderr as NodeJS.WriteStream, discardStdin: false }).start();
      const spinner: Spinner = {
        update: (m) => {
          s.text = clean(m)!;
        },
        succeed: (m) => {
          s.succeed(clean(m));
          this.activeSpinner = undefined;
        },
        fail: (m) => {
          s.fail(clean(m));
          this.activeSpinner = undefined;
        },
        stop: () => {
          s.stop();
          this.activeSpinner = undefined;
        },
      };
      this.activeSpinner = spinner;
      return spinner;
    }
    this.progress(event, message);
    return {
      update: (m) => this.progress(event, m),
      succeed: (m) => m && this.progress(`${event}.done`, m),
      fail: (m) => m && this.progress(`${event}.failed`, m),
      stop: () => undefined,
    };
  }

  private stopSpinner(): void {
    this.activeSpinner?.stop();
    this.activeSpinner = undefined;
  }
}

export interface ErrorBody {
  code: string;
  message: string;
  hint?: string;
  [key: string]: unknown;
}

export function errorBody(raw: unknown, debug: boolean): ErrorBody {
  const error = asKnownError(raw);
  if (error instanceof LoopsignError) {
    const body: ErrorBody = { code: error.code, message: error.message };
    if (error.hint) body.hint = error.hint;
    if (error.details) Object.assign(body, redact(error.details));
    body.exitCode = error.exitCode;
    return body;
  }
  const message = error instanceof Error ? error.message : String(error);
  return {
    code: 'internal_error',
    message: `internal error: ${message}`,
    hint: debug ? 'see the stack trace above' : 'rerun with --debug for a stack trace, and report it',
    exitCode: ExitCode.internal,
  };
}

/** Fallback text rendering: "key: value" lines for flat results. */
export function defaultText(data: Record<string, unknown>): string {
  return Object.entries(data)
    .map(([k, v]) => `${k}: ${typeof v === 'object' && v !== null ? jsonText(v) : String(v)}`)
    .join('\n');
}
