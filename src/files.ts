// Which files a run may read on someone's behalf. The CLI reads what its user names; an MCP server reads for an
// agent, and only under the folders its host (or its user, at start) allowed — never loopsign's own secrets.
export interface FileGate {
  /** The path to read `file` at, or a refusal (exit 5) when this run may not read it. `what` names it in messages. */
  check(file: string, what: string): Promise<string>;
}

/** The CLI's gate: the user names the file. */
export const ANY_FILE: FileGate = { check: async (file) => file };
