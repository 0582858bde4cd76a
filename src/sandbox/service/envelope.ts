// The service's error envelope (service-api.md §2.1): {code, message, recoverWith, retryable, status[, originalCode]}.

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly recoverWith: string | null = null,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
  }

  get retryable(): boolean {
    return this.status >= 500 || this.status === 429;
  }

  body(): Record<string, unknown> {
    return {
      code: this.code,
      message: this.message,
      recoverWith: this.recoverWith,
      retryable: this.retryable,
      status: this.status,
      ...this.extra,
    };
  }
}

const isMedia = (message: string) => message.includes('imageUrls') || message.includes('videoUrl');
export const invalidArguments = (message: string) =>
  new ApiError(
    400,
    isMedia(message) ? 'invalid_media' : 'invalid_arguments',
    message,
    isMedia(message) ? 'fix_media_urls' : 'fix_tool_arguments',
  );
export const invalidRequest = (message = 'Request body must be valid JSON.') =>
  new ApiError(400, 'invalid_request', message, 'fix_request_body');
export const conflict = (message: string, code = 'conflict', recoverWith = 'refresh_and_retry') =>
  new ApiError(409, code, message, recoverWith);
export const notFound = (message: string) => new ApiError(404, 'not_found', message, 'verify_operation_identifiers');
