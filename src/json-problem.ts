// What is wrong with a JSON text, said without quoting it. V8's JSON.parse messages quote up to about ten characters
// of the input (`Unexpected token 'h', "hunter2\n" is not valid JSON`): pointed at the wrong file — a password file,
// /proc/self/environ — a command would print the start of a secret. loopsign says where the text broke, never what it
// says there.

/** "not valid JSON", with the line and column when the parser told the position. */
export function jsonProblem(error: unknown, text?: string): string {
  const message = error instanceof Error ? error.message : String(error);
  const at = /position (\d+)/.exec(message);
  if (at && text !== undefined) {
    const position = Math.min(Number(at[1]), text.length);
    const before = text.slice(0, position);
    const line = before.split('\n').length;
    return `not valid JSON (line ${line}, column ${position - before.lastIndexOf('\n')})`;
  }
  if (at) return `not valid JSON (at character ${Number(at[1]) + 1})`;
  if (/end of JSON input/i.test(message)) return 'not valid JSON (it ends too early)';
  return 'not valid JSON';
}

/** A parser message that may quote the input (V8's), reduced to what jsonProblem says; loopsign's own are kept. */
export function quietJsonMessage(message: string): string {
  return /is not valid JSON|Unexpected token|in JSON at position|JSON input|Bad control character|Bad escaped|Unterminated string|Expected/.test(
    message,
  )
    ? jsonProblem(new Error(message))
    : message;
}
