// Every failure of a tool call, as an MCP client receives it: loopsign's error document (code, message, hint,
// exitCode, exitMeaning and the error's details), never bare text. Input that does not match a tool's schema is a
// usage error (exit 2) like a bad flag. Hints are for whoever runs the server: the errors come from the CLI's own
// code, whose hints name its flags, and an MCP user cannot pass a flag to a tool call. What a flag sets for the whole
// server is set in its environment (the `env` of its entry in the host's MCP configuration) or in the config file,
// read on every call; what a flag sets for one command is a tool argument. Kept apart from the tools so that tools
// rebuilt on the core keep using it.
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { z } from 'zod';
import { EXIT_MEANING, UsageError, type ExitCodeValue } from '../errors.js';
import { errorBody, jsonText } from '../output.js';
import { forMcp } from '../hints.js';

const ENV = "the server's environment (the env of its entry in the host's MCP configuration; restart the server after changing it)";

/** Hints replaced whole, by error code: a rewrite of the CLI's words would read badly. */
const HINTS: Record<string, string> = {
  keystore_not_found: `set LOOPSIGN_KEYSTORE in ${ENV} (or keystore in the config file) to your keystore, or create one on that machine with \`loopsign wallet new\``,
  password_required: `the server has no terminal to ask on: set LOOPSIGN_PASSWORD_FILE (a file holding the password) or LOOPSIGN_PASSWORD in ${ENV}, or passwordFile in the config file`,
  wrong_password: `check the password LOOPSIGN_PASSWORD_FILE or LOOPSIGN_PASSWORD gives in ${ENV} (or passwordFile in the config file); the keystore itself was not changed`,
  weak_kdf:
    "re-encrypt the keystore with `loopsign wallet rekey` on the machine running the server, or add --allow-weak-kdf before `mcp` in the server's arguments (the host's MCP configuration) to use it as it is",
  base_url_required: `set LOOPSIGN_BASE_URL=https://www.rateloop.ai in ${ENV} (or baseUrl in the config file); on the sandbox chain its manifest supplies it`,
  internal_error:
    "add --debug before `mcp` in the server's arguments (the host's MCP configuration) for a stack trace on its stderr, and report it",
  result_not_final: 'call again with wait: true, or later',
  no_transactions: 'give the hashes in transactionHashes, in plan order',
  delegation_not_allowed: 'call again with atomic: true to allow loopsign to delegate the wallet to the pinned delegate; nothing was sent',
  invalid_packet_shape: 'give kind: "audit" or kind: "coverage" to say which export the file is',
};

/** The hint as an MCP user can act on it (src/hints.ts renders it; a few are replaced whole). */
export function mcpHint(code: string, hint: string | undefined): string | undefined {
  return HINTS[code] ?? forMcp(hint);
}

/** loopsign's error document for a failure, with the MCP user's hint and what the exit code means. */
export function errorDocument(error: unknown, debug: boolean): { ok: false; error: Record<string, unknown> } {
  const body = errorBody(error, debug);
  const hint = debug && body.code === 'internal_error' ? body.hint : mcpHint(body.code, body.hint);
  return {
    ok: false,
    error: {
      ...body,
      message: forMcp(body.message),
      ...(hint === undefined ? {} : { hint }),
      exitMeaning: EXIT_MEANING[body.exitCode as ExitCodeValue],
    },
  };
}

/** A failure as a tool error result. */
export function toolError(error: unknown, debug: boolean): CallToolResult {
  if (debug && error instanceof Error && error.stack) process.stderr.write(error.stack + '\n');
  // No structuredContent: a client checks it against the tool's output schema, which describes success.
  return { isError: true, content: [{ type: 'text', text: jsonText(errorDocument(error, debug)) }] };
}

/** Arguments that do not match a tool's input schema: nothing was run, as with a bad flag. */
export function invalidArguments(tool: string, error: z.ZodError | { path: PropertyKey[]; message: string }[]): UsageError {
  const list = Array.isArray(error) ? error : error.issues;
  const issues = list.map((i) => `${i.path.length ? i.path.join('.') : 'arguments'}: ${i.message}`);
  return new UsageError('invalid_arguments', `invalid arguments for ${tool}: ${issues.join('; ')}`, {
    hint: `fix the arguments to match the inputSchema of ${tool} (tools/list) and call again; nothing was run`,
    details: { tool, issues: list.map((i) => ({ path: i.path.map(String), message: i.message })) },
  });
}

/** Pairs of arguments of which exactly one must be given (a path, or the same JSON inline): the issues, if any. */
export function exactlyOneIssues(
  input: Record<string, unknown>,
  pairs: [path: string, inline: string][],
): { path: string[]; message: string }[] {
  return pairs
    .filter(([a, b]) => (input[a] === undefined) === (input[b] === undefined))
    .map(([a, b]) => ({
      path: [input[a] === undefined ? a : b],
      message: `give ${a} (a path) or ${b} (the JSON object itself), exactly one of the two`,
    }));
}

/** A tool name the server does not have (a protocol error; its data is the error document). */
export function unknownTool(name: string): UsageError {
  return new UsageError('unknown_tool', `loopsign has no tool ${JSON.stringify(name)}`, {
    hint: 'call tools/list for the tools this server offers',
  });
}
