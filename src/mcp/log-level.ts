// The log level a host sets with logging/setLevel: log notifications below it are not sent. One server process
// serves one host over stdio, so one level per server. Until the host sets one, every message is sent (the spec
// leaves the default to the server). Kept apart from the tools so that tools rebuilt on the core keep using it.
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { ErrorCode, McpError, type LoggingLevel } from '@modelcontextprotocol/sdk/types.js';
import * as z from 'zod';

/** RFC 5424 severities, least severe first (the order the spec gives). */
const SEVERITY: readonly LoggingLevel[] = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'];

export class LogLevel {
  private minimum: LoggingLevel | undefined;

  /**
   * Answers logging/setLevel on this server. The level is checked here, not by the request's schema: the SDK
   * answers a request its schema refuses as an internal error (-32603), the spec wants invalid params (-32602).
   */
  install(server: Server): void {
    const request = z.object({ method: z.literal('logging/setLevel'), params: z.looseObject({ level: z.unknown() }) });
    server.setRequestHandler(request, async ({ params: { level } }) => {
      if (!SEVERITY.includes(level as LoggingLevel))
        throw new McpError(ErrorCode.InvalidParams, `unknown log level ${JSON.stringify(level)}: one of ${SEVERITY.join(', ')}`);
      this.minimum = level as LoggingLevel;
      return {};
    });
  }

  /** Whether a message of this level goes to the host. */
  allows(level: LoggingLevel): boolean {
    return this.minimum === undefined || SEVERITY.indexOf(level) >= SEVERITY.indexOf(this.minimum);
  }
}
