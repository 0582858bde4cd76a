// Hints, messages and next steps in the caller's language (issue 36 §4), rendered here and only here. loopsign writes
// them once, in its CLI's words (`loopsign status --operation-key K --wait`: the documented commands); each surface
// renders them from one table of commands and their arguments:
// - over MCP (forMcp): a command that has a tool becomes that tool's call with its arguments
//   (`loopsign_status {operationKey: "K", wait: true}`), a flag of the whole server becomes the setting that sets it
//   for the server, any other flag the tool argument of the same name (`--trusted-keys` → `trustedKeys`): never a flag
//   (but the server's own arguments: `loopsign mcp --root DIR`, or written "before `mcp`" in the host's configuration);
// - on the command line (forCli): a tool name of the service (`call_rateloop_get_result`, `rateloop_…`) becomes the
//   loopsign command that does it, or the service's action in plain words: never a name a CLI user cannot run.

const ENV = "the server's environment (the env of its entry in the host's MCP configuration; restart the server after changing it)";

/** CLI commands that have an MCP tool. */
const TOOLS: Record<string, string> = {
  templates: 'loopsign_templates',
  quote: 'loopsign_quote',
  ask: 'loopsign_ask',
  confirm: 'loopsign_confirm',
  status: 'loopsign_status',
  result: 'loopsign_result',
  'check-plan': 'loopsign_check_plan',
  'verify-evidence': 'loopsign_verify_evidence',
  'rate commit': 'loopsign_rate_commit',
  rate: 'loopsign_rate',
  'upload-image': 'loopsign_upload_image',
  'wallet address': 'loopsign_wallet_address',
  'wallet balance': 'loopsign_wallet_balance',
};

/** Flags whose tool argument is not simply their camelCase name, or that take no value (`name: value` as written). */
const ARGUMENT: Record<string, string> = {
  tx: 'transactionHashes',
  timeout: 'timeoutSeconds',
  wait: 'wait: true',
  atomic: 'atomic: true',
  'dry-run': 'dryRun: true',
  'no-confirm': 'confirm: false',
  'feedback-bonus': 'feedbackBonus: true',
};
const FLAGS_WITHOUT_VALUE = new Set(Object.keys(ARGUMENT).filter((k) => ARGUMENT[k]!.includes(': ')));

/** A flag's value as hints write it: a placeholder (FILE, URL), a URL, a number or a hex value. */
const VALUE = String.raw`(?:[A-Z][A-Z_]*\b|https?://\S+|0x[0-9a-fA-F…]+|\d+(?:\.\d+)?\b)`;

/** Flags of the whole server, and what sets the same thing for it. */
const SERVER_SETTINGS: [RegExp, (value?: string) => string][] = [
  [/--base-url(?: (?:[A-Z][A-Z_]*\b|https?:\/\/\S+))?/g, () => `LOOPSIGN_BASE_URL in ${ENV} (or baseUrl in the config file)`],
  [/--rpc-url(?: (?:[A-Z][A-Z_]*\b|https?:\/\/\S+))?/g, () => `LOOPSIGN_RPC_URL in ${ENV} (or rpcUrl in the config file)`],
  [/--chain-id(?: (\d+))?/g, (n) => `LOOPSIGN_CHAIN_ID${n ? `=${n}` : ''} in ${ENV} (or chainId in the config file)`],
  [/--keystore(?: [A-Z][A-Z_]*\b)?/g, () => `LOOPSIGN_KEYSTORE in ${ENV}`],
  [/--policy(?: [A-Z][A-Z_]*\b)?/g, () => `LOOPSIGN_POLICY in ${ENV}`],
  [/--password-file(?: [A-Z][A-Z_]*\b)?/g, () => `LOOPSIGN_PASSWORD_FILE in ${ENV}`],
  [/--password-env(?: [A-Z][A-Z_]*\b)?/g, () => `LOOPSIGN_PASSWORD in ${ENV}`],
];

/** Stands for the dashes of a flag kept as written while the rest of a text is rendered. */
const KEPT = '\u0000';

const camel = (flag: string) => flag.replace(/-([a-z])/g, (_m, c: string) => c.toUpperCase());

/** `--flag VALUE` as the tool argument that does the same. */
function argument(flag: string, value: string | undefined): string {
  const name = ARGUMENT[flag] ?? camel(flag);
  if (name.includes(': ')) return name;
  // A placeholder (FILE, PIN) says only that a value goes there: the argument's name says as much.
  return value === undefined || /^[A-Z][A-Z_]*$/.test(value)
    ? name
    : `${name}: ${/^\d+(\.\d+)?$/.test(value) ? value : JSON.stringify(value)}`;
}

/** `loopsign <command> [positional] --flags…`, in backticks or not. */
const COMMAND =
  /`?loopsign ([a-z][a-z-]*(?: [a-z][a-z-]*)?)((?: (?:--[a-z][a-z-]*(?: (?!--)[^\s`;,)]+)?|0x[0-9a-fA-F…]+|\d+|[A-Z][A-Z_]*|[\w./-]*[/.][\w./-]*))*)`?/g;

/** A CLI command with a tool, as that tool's call; any other stays a command, its flags as option names. */
function toolCall(command: string, rest: string, whole: string): string {
  // Prose ("loopsign asks for your approval") is no command: one is in backticks, or carries a flag.
  if (!whole.startsWith('`') && !rest.includes('--')) return whole;
  // The server's own command line (`loopsign mcp --root DIR`): what the host's configuration holds, as written.
  if (command === 'mcp' || command.startsWith('mcp ')) return whole.replace(/--/g, KEPT);
  const tool = TOOLS[command];
  if (!tool) return whole.replace(/--([a-z][a-z-]*)/g, (_m, f: string) => `option ${f}`);
  const tokens = rest.trim().split(/\s+/).filter(Boolean);
  const args: string[] = [];
  for (let i = 0; i < tokens.length; i++) {
    const flag = /^--([a-z][a-z-]*)$/.exec(tokens[i]!)?.[1];
    if (!flag) continue; // a positional: the tool takes it by name, which the table does not know
    const value = !FLAGS_WITHOUT_VALUE.has(flag) && tokens[i + 1] && !tokens[i + 1]!.startsWith('--') ? tokens[++i] : undefined;
    args.push(argument(flag, value));
  }
  return `${tool} {${args.join(', ')}}`;
}

/** Text written in the CLI's words, as an MCP client can act on it: tools and arguments, never a flag. */
export function forMcp(text: string): string;
export function forMcp(text: string | undefined): string | undefined;
export function forMcp(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  // The service's tool names first, as the loopsign commands that do the same; then those as tool calls.
  let out = serviceTools(text, (command) => `\`${command}\``).replace(COMMAND, (whole, command: string, rest: string) =>
    toolCall(command, rest, whole),
  );
  for (const [pattern, render] of SERVER_SETTINGS) out = out.replace(pattern, (_m, v?: string) => render(v));
  // Any flag left is a tool argument of the same name (the tools' arguments are the flags' camelCase names), except an
  // argument of the server itself: one written before `mcp` in the host's configuration stays as it is written there.
  out = out.replace(
    new RegExp(String.raw`--([a-z][a-z-]*)(?![a-z-])(?! before \`mcp\`)(?: (${VALUE}))?`, 'g'),
    (_m, flag: string, value?: string) => argument(flag, value),
  );
  return out.replaceAll(KEPT, '--');
}

/** The service's tools an answer may name (recoverWith, nextAction), as the loopsign command that does the same. */
const SERVICE_TOOLS: Record<string, string> = {
  get_result: 'loopsign result',
  get_ask_result: 'loopsign result',
  get_question_result: 'loopsign result',
  get_ask_status: 'loopsign status',
  get_question_status: 'loopsign status',
  get_status: 'loopsign status',
  list_result_templates: 'loopsign templates',
  quote_question: 'loopsign quote',
  quote_ask: 'loopsign quote',
  ask_humans: 'loopsign ask',
  confirm_ask_transactions: 'loopsign confirm',
  confirm_transactions: 'loopsign confirm',
  get_rating_status: 'loopsign rate status',
};

/** Text that may carry the service's tool names, as a CLI user can act on it: loopsign commands, never those names. */
export function forCli(text: string): string;
export function forCli(text: string | undefined): string | undefined;
export function forCli(text: string | undefined): string | undefined {
  return text === undefined ? undefined : serviceTools(text, (command) => command);
}

function serviceTools(text: string, command: (c: string) => string): string {
  return text.replace(/\b(?:call_)?rateloop_([a-z0-9_]+)\b/g, (_m, action: string) =>
    SERVICE_TOOLS[action] ? command(SERVICE_TOOLS[action]) : `the service's "${action.replace(/_/g, ' ')}"`,
  );
}
