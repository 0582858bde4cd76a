// One error hierarchy for the whole CLI. Every failure a user can see is a LoopsignError whose class fixes the
// documented exit code; anything else is an internal error (exit 1) and shows a stack only under --debug.

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
} as const;
export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode];

export interface ErrorOptions {
  hint?: string;
  details?: Record<string, unknown>;
  cause?: unknown;
}

export class LoopsignError extends Error {
  exitCode: ExitCodeValue = ExitCode.internal;
  readonly code: string;
  readonly hint: string | undefined;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: string, message: string, options: ErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.hint = options.hint;
    this.details = options.details;
  }
}

/** Bad flags, bad files, invalid input: nothing was sent. */
export class UsageError extends LoopsignError {
  override exitCode: ExitCodeValue = ExitCode.usage;
}

/** The service answered with an error, or could not be reached. */
export class ServiceError extends LoopsignError {
  override exitCode: ExitCodeValue = ExitCode.service;
}

/** The chain or its RPC failed (wrong chain id, reverted transaction, unreachable RPC). */
export class ChainError extends LoopsignError {
  override exitCode: ExitCodeValue = ExitCode.chain;
}

/** A safety check refused what the service asked us to sign or send. */
export class RefusedError extends LoopsignError {
  override exitCode: ExitCodeValue = ExitCode.refused;
}

/** Keystore, password or other credential problems. */
export class CredentialError extends LoopsignError {
  override exitCode: ExitCodeValue = ExitCode.credential;
}

/** Not ready yet: a wait timed out or a result is not final. */
export class NotReadyError extends LoopsignError {
  override exitCode: ExitCodeValue = ExitCode.notReady;
}

/** Evidence was read fine but did not verify. */
export class EvidenceInvalidError extends LoopsignError {
  override exitCode: ExitCodeValue = ExitCode.evidenceInvalid;
}

export function exitCodeOf(error: unknown): ExitCodeValue {
  return error instanceof LoopsignError ? error.exitCode : ExitCode.internal;
}
