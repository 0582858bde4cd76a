// One error hierarchy for the whole CLI. Every failure a user can see is a LoopsignError whose class fixes the
// documented exit code; anything else is an internal error (exit 1) and shows a stack only under --debug.
// Every code comes from the table in src/error-codes.ts: each class takes exactly the codes the table gives its exit
// code (UsageError the exit-2 codes, …), so a code missing from the table, or thrown through a class whose exit code
// the table does not give it, does not compile. Only types are imported: `--help` loads no table.
import type {
  ChainCode,
  CredentialCode,
  ErrorCode,
  BusyCode,
  EvidenceInvalidCode,
  NotReadyCode,
  RefusedCode,
  ServiceCode,
  ServiceWord,
  UsageCode,
} from './error-codes.js';

export const ExitCode = {
  ok: 0,
  internal: 1,
  usage: 2,
  service: 3,
  chain: 4,
  refused: 5,
  credential: 6,
  notReady: 7,
  evidenceInvalid: 8,
  /** Busy: another loopsign process holds what this run needs (the same operation); nothing was sent, run it again. */
  busy: 9,
  /** Stopped by SIGINT (Ctrl-C): 128 + 2, as shells report it. */
  interrupted: 130,
  /** Stopped by SIGTERM: 128 + 15. */
  terminated: 143,
} as const;
export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode];

/** What each exit code means (docs/cli.md), for errors that travel without a process exit: MCP tool errors. */
export const EXIT_MEANING: Record<ExitCodeValue, string> = {
  0: 'ok',
  1: 'internal error (a bug: rerun with --debug and report it)',
  2: 'usage or invalid input (nothing was sent)',
  3: 'the service returned an error or could not be reached',
  4: 'chain or RPC error (wrong chain, unreachable RPC, reverted transaction)',
  5: 'refused by a safety check (the guards or the spending policy); do not retry blindly',
  6: 'keystore or credential error (missing keystore, wrong password, no password source)',
  7: 'not ready yet (a wait timed out or was cancelled, a result is not final)',
  8: 'evidence failed verification',
  9: 'busy: another loopsign process is working on the same operation (nothing was sent); wait for it, then run the same command again',
  130: 'stopped by SIGINT (Ctrl-C); run the same command again to resume',
  143: 'stopped by SIGTERM; run the same command again to resume',
};

export interface ErrorOptions {
  hint?: string;
  details?: Record<string, unknown>;
  cause?: unknown;
}

/** Any code an error carries: one of the table's, or a word the service chose (src/error-codes.ts). */
export type Code = ErrorCode | ServiceWord;

export class LoopsignError extends Error {
  exitCode: ExitCodeValue = ExitCode.internal;
  readonly code: Code;
  readonly hint: string | undefined;
  readonly details: Record<string, unknown> | undefined;

  /** Protected: a code is thrown through the class of its exit code (below), never through this one. */
  protected constructor(code: Code, message: string, options: ErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.hint = options.hint;
    this.details = options.details;
  }

  /** A failure kept as data (one file of several) thrown again under another message, with its code and exit code. */
  static again(failure: { code: Code; exitCode: ExitCodeValue }, message: string, options: ErrorOptions = {}): LoopsignError {
    const error = new LoopsignError(failure.code, message, options);
    error.exitCode = failure.exitCode;
    return error;
  }
}

/** Bad flags, bad files, invalid input: nothing was sent. */
export class UsageError extends LoopsignError {
  override exitCode: ExitCodeValue = ExitCode.usage;
  declare readonly code: UsageCode;

  constructor(code: UsageCode, message: string, options?: ErrorOptions) {
    super(code, message, options);
  }
}

/** The service answered with an error, or could not be reached. */
export class ServiceError extends LoopsignError {
  override exitCode: ExitCodeValue = ExitCode.service;
  declare readonly code: ServiceCode | ServiceWord;

  constructor(code: ServiceCode | ServiceWord, message: string, options?: ErrorOptions) {
    super(code, message, options);
  }
}

/** The chain or its RPC failed (wrong chain id, reverted transaction, unreachable RPC). */
export class ChainError extends LoopsignError {
  override exitCode: ExitCodeValue = ExitCode.chain;
  declare readonly code: ChainCode;

  constructor(code: ChainCode, message: string, options?: ErrorOptions) {
    super(code, message, options);
  }
}

/** A safety check refused what the service asked us to sign or send. */
export class RefusedError extends LoopsignError {
  override exitCode: ExitCodeValue = ExitCode.refused;
  declare readonly code: RefusedCode;

  constructor(code: RefusedCode, message: string, options?: ErrorOptions) {
    super(code, message, options);
  }
}

/** Keystore, password or other credential problems. */
export class CredentialError extends LoopsignError {
  override exitCode: ExitCodeValue = ExitCode.credential;
  declare readonly code: CredentialCode | ServiceWord;

  constructor(code: CredentialCode | ServiceWord, message: string, options?: ErrorOptions) {
    super(code, message, options);
  }
}

/** Not ready yet: a wait timed out or a result is not final. */
export class NotReadyError extends LoopsignError {
  override exitCode: ExitCodeValue = ExitCode.notReady;
  declare readonly code: NotReadyCode;

  constructor(code: NotReadyCode, message: string, options?: ErrorOptions) {
    super(code, message, options);
  }
}

/** Evidence was read fine but did not verify. */
export class EvidenceInvalidError extends LoopsignError {
  override exitCode: ExitCodeValue = ExitCode.evidenceInvalid;
  declare readonly code: EvidenceInvalidCode;

  constructor(code: EvidenceInvalidCode, message: string, options?: ErrorOptions) {
    super(code, message, options);
  }
}

/** Another loopsign process holds what this run needs (the same operation's journal): a retry later succeeds. */
export class BusyError extends LoopsignError {
  override exitCode: ExitCodeValue = ExitCode.busy;
  declare readonly code: BusyCode;

  constructor(code: BusyCode, message: string, options?: ErrorOptions) {
    super(code, message, options);
  }
}

/** The process was stopped by SIGINT or SIGTERM (src/shutdown.ts): exit 130 or 143. */
export class InterruptedError extends LoopsignError {
  override exitCode: ExitCodeValue;

  constructor(signal: 'SIGINT' | 'SIGTERM', message: string, options: ErrorOptions = {}) {
    super(signal === 'SIGINT' ? 'interrupted' : 'terminated', message, options);
    this.exitCode = signal === 'SIGINT' ? ExitCode.interrupted : ExitCode.terminated;
  }
}

export function exitCodeOf(error: unknown): ExitCodeValue {
  const known = asKnownError(error);
  return known instanceof LoopsignError ? known.exitCode : ExitCode.internal;
}

// viem's errors that come from a request to the node: its transports' (HttpRequestError, WebSocketRequestError,
// TimeoutError, SocketClosedError, and ResponseBodyTooLargeError for an answer over its 10 MiB cap), a JSON-RPC error
// answer (RpcRequestError, and its typed kinds, all named …RpcError), and the node's own words for a transaction it
// refused (named …Error by viem, under TransactionExecutionError).
const NODE_FAILURES =
  /^(HttpRequestError|WebSocketRequestError|TimeoutError|SocketClosedError|ResponseBodyTooLargeError|RpcRequestError|\w+RpcError)$/;

// Of those, the ones where the node gave no answer at all: a timeout, a dropped connection, an HTTP error page, an
// answer over the cap. The node said nothing then about what was asked (whether a call reverts, whether it has a
// transaction), so such an error must never be read as its verdict.
const NO_ANSWER = /^(HttpRequestError|WebSocketRequestError|TimeoutError|SocketClosedError|ResponseBodyTooLargeError)$/;

/** Whether this (viem) error is, or was caused by, a request the node gave no answer to (by shape, as asKnownError). */
export function noAnswerFromNode(error: unknown): boolean {
  const v = error as { walk?: (fn: (e: unknown) => boolean) => unknown };
  if (!(error instanceof Error) || typeof v.walk !== 'function') return false;
  return Boolean(v.walk((e) => e instanceof Error && NO_ANSWER.test(e.name)));
}

/**
 * Whether a simulation's failure is the node's error and not its verdict on the call: a JSON-RPC error answer ("limit
 * exceeded", "method not found", "header not found") that viem could not place among its node errors, with no revert
 * data. A revert viem always names (ExecutionRevertedError: code 3, "execution reverted", "gas required exceeds
 * allowance"), and so it does the node's other verdicts on a transaction (insufficient funds, fee cap, nonce); the EVM
 * failing the call otherwise (an invalid opcode, a bad jump) comes in the node's own words. A node that said none of
 * these has not said the call would fail, so it must not read as a refusal.
 */
export function nodeErrorNotRevert(error: unknown): boolean {
  const v = error as { walk?: (fn: (e: unknown) => boolean) => unknown };
  if (!(error instanceof Error) || typeof v.walk !== 'function') return false;
  const verdict = v.walk((e) => {
    if (e instanceof Error && NODE_VERDICTS.test(e.name)) return true;
    // The EVM failing the call, in the node's own words (the JSON-RPC error's message, viem's `details`): anvil's
    // "EVM error InvalidFEOpcode" (-32603), geth's "invalid opcode: INVALID" (-32000), which viem does not name.
    const details = (e as { details?: unknown }).details;
    if (typeof details === 'string' && EVM_FAILURES.test(details)) return true;
    const data = (e as { data?: unknown }).data;
    return typeof data === 'string' && /^0x[0-9a-fA-F]{8}/.test(data);
  });
  return !verdict && Boolean(v.walk((e) => e instanceof Error && NODE_FAILURES.test(e.name)));
}

// What the EVM says when it fails a call without a revert (revm through anvil and reth, geth): a verdict on the call.
const EVM_FAILURES = /^EVM error \w+|\binvalid (opcode|jump)\b|\bstack (underflow|overflow|limit)\b|\bout of gas\b/i;

// viem's names for what a node said of a call or transaction itself (viem/errors/node.ts), not of the request.
const NODE_VERDICTS =
  /^(ExecutionReverted|FeeCapTooHigh|FeeCapTooLow|NonceTooHigh|NonceTooLow|NonceMaxValue|InsufficientFunds|IntrinsicGasTooHigh|IntrinsicGasTooLow|TransactionTypeNotSupported|TipAboveFeeCap)Error$/;

/**
 * An error loopsign did not make itself, as the error it is when it is one loopsign knows: a viem error from a
 * request to the RPC that no step wrapped is the chain's failure (exit 4, `rpc_failed`), never "loopsign hit a bug".
 * Anything else is returned as it is (an internal error). viem's errors are recognised by their shape (their name,
 * `walk` and `shortMessage`), so that rendering an error never loads viem.
 */
export function asKnownError(error: unknown): unknown {
  if (error instanceof LoopsignError || !(error instanceof Error)) return error;
  const v = error as Error & { walk?: (fn: (e: unknown) => boolean) => unknown; shortMessage?: string };
  if (typeof v.walk !== 'function' || typeof v.shortMessage !== 'string') return error;
  const failure = v.walk((e) => e instanceof Error && NODE_FAILURES.test(e.name));
  if (!failure) return error;
  // viem's short message names the kind ("An internal error was received."); the node's own words are its details.
  const first = (text: unknown) => (typeof text === 'string' ? text.split('\n')[0]!.trim().slice(0, 300) : '');
  const short = first(v.shortMessage);
  const details = first((failure as { details?: unknown }).details);
  const said = details && !short.includes(details) ? `${short.replace(/\.$/, '')}: ${details}` : short;
  return new ChainError('rpc_failed', `a request to the RPC failed: ${said}`, {
    hint: 'check the RPC (--rpc-url) and run the same command again: what was signed is journaled, and a rerun resumes it',
    cause: error,
  });
}
