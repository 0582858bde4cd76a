// The output contract (docs/cli.md):
// - with --json, stdout carries exactly one JSON document: {"ok":true,...} or {"ok":false,"error":{...}};
//   progress goes to stderr as one JSON line per event;
// - without --json, readable text on stdout, progress on stderr (a spinner on a TTY);
// - colours only on a TTY and never under NO_COLOR.
import { styleText } from 'node:util';
import { LoopsignError, exitCodeOf, ExitCode } from './errors.js';

export interface OutputOptions {
  json: boolean;
  quiet: boolean;
  debug: boolean;
}

export interface Streams {
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
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

// ANSI/VT escape sequences (CSI, OSC, and two-byte ESC forms), then any other C0/C1 control character.
const ESCAPES = /\u001b(?:\[[0-?]*[ -/]*[@-~]|\][^\u0007\u001b]*(?:\u0007|\u001b\\)?|[@-Z\\-_])/g;
const CONTROLS = /[\u0000-\u001f\u007f-\u009f]/g;

/** Service text as loopsign may print it: escape sequences removed, other control characters made spaces. */
export function printable(text: string): string {
  return text.replace(ESCAPES, '').replace(CONTROLS, ' ');
}

/** A service word (an error code, a recoverWith action) in its documented form, or undefined: never free text. */
export function serviceWord(value: unknown): string | undefined {
  return typeof value === 'string' && WORD.test(value) ? value : undefined;
}

export function jsonText(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
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

  constructor(
    readonly options: OutputOptions,
    private readonly streams: Streams = { stdout: process.stdout, stderr: process.stderr },
  ) {}

  get json(): boolean {
    return this.options.json;
  }

  /** Colour text for stdout when it is a TTY and NO_COLOR is unset. */
  style(style: Style, text: string, stream: 'stdout' | 'stderr' = 'stdout'): string {
    const tty = this.streams[stream].isTTY === true;
    if (!tty || process.env.NO_COLOR !== undefined || process.env.TERM === 'dumb') return text;
    return styleText(style, text);
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
      this.streams.stdout.write(jsonText({ ok: true, ...redact(data) }) + '\n');
      return;
    }
    const rendered = typeof text === 'function' ? text() : (text ?? defaultText(redact(data)));
    if (rendered.length > 0) this.streams.stdout.write(rendered.endsWith('\n') ? rendered : rendered + '\n');
  }

  /** Render a failure. Returns the exit code to use. */
  error(error: unknown): number {
    this.stopSpinner();
    const code = exitCodeOf(error);
    const body = errorBody(error, this.options.debug);
    if (this.options.json && !this.written) {
      this.written = true;
      this.streams.stdout.write(jsonText({ ok: false, error: body }) + '\n');
    } else {
      const label = this.style('red', 'error:', 'stderr');
      let line = `${label} ${body.message}`;
      if (body.hint) line += `\n${this.style('dim', 'hint:', 'stderr')} ${body.hint}`;
      this.streams.stderr.write(line + '\n');
    }
    if (this.options.debug && error instanceof Error && error.stack) {
      this.streams.stderr.write(error.stack + '\n');
      if (error.cause instanceof Error && error.cause.stack) this.streams.stderr.write(`cause: ${error.cause.stack}\n`);
    }
    return code;
  }

  /** A progress event: a JSON line on stderr under --json, else a plain line (unless --quiet). */
  progress(event: string, message: string, data: Record<string, unknown> = {}): void {
    if (this.options.json) {
      this.streams.stderr.write(jsonText({ event, message, ...redact(data) }) + '\n');
      return;
    }
    if (this.options.quiet) return;
    if (this.activeSpinner) {
      this.activeSpinner.update(message);
      return;
    }
    this.streams.stderr.write(`${this.style('dim', '•', 'stderr')} ${message}\n`);
  }

  warn(message: string, data: Record<string, unknown> = {}): void {
    if (this.options.json) {
      this.streams.stderr.write(jsonText({ event: 'warning', message, ...redact(data) }) + '\n');
      return;
    }
    this.streams.stderr.write(`${this.style('yellow', 'warning:', 'stderr')} ${message}\n`);
  }

  /** A spinner on a TTY; progress events otherwise. ora is loaded only when a spinner is really shown. */
  async spinner(event: string, message: string): Promise<Spinner> {
    const stderr = this.streams.stderr;
    if (!this.options.json && !this.options.quiet && stderr.isTTY === true) {
      const { default: ora } = await import('ora');
      const s = ora({ text: message, stream: stderr as NodeJS.WriteStream }).start();
      const spinner: Spinner = {
        update: (m) => {
          s.text = m;
        },
        succeed: (m) => {
          s.succeed(m);
          this.activeSpinner = undefined;
        },
        fail: (m) => {
          s.fail(m);
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

export function errorBody(error: unknown, debug: boolean): ErrorBody {
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
