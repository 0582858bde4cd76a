// Commander's usage errors (a missing required option, an unknown flag or command, a missing value) as one
// loopsign error: the first line of commander's message, its suggestion as the hint, exit 2. An unknown option is
// named without its value: `--password=…` must never be echoed. Flags that would put a secret in argv get the way
// loopsign takes that secret instead.
import type { UsageCode } from './error-codes.js';
import { UsageError } from './errors.js';

interface CommanderLike {
  code: string;
  message: string;
}

// Secrets loopsign takes only from files or named variables, never as an argument.
const SECRET_FLAGS: [RegExp, string, string][] = [
  [
    /^--(password|pass|passphrase|keystore-password)$/,
    'passwords never go on the command line (other users and the shell history can read argv)',
    'use --password-file FILE or --password-env NAME (or set LOOPSIGN_PASSWORD_FILE)',
  ],
  [
    /^--(private-key|key|secret-key|mnemonic)$/,
    'private keys never go on the command line (other users and the shell history can read argv)',
    'import the key from a file: `loopsign wallet import --private-key-file FILE` (or - for stdin)',
  ],
  [
    /^--(api-key|token|api-token)$/,
    'API keys never go on the command line (other users and the shell history can read argv)',
    'use --api-key-file FILE or --api-key-env NAME (or set LOOPSIGN_API_KEY_FILE)',
  ],
];

// Commander's error codes as loopsign names them (its own words in snake case); any other is loopsign's `usage`.
const COMMANDER_CODES: Record<string, UsageCode | undefined> = {
  'commander.unknownCommand': 'unknown_command',
  'commander.excessArguments': 'excess_arguments',
  'commander.missingArgument': 'missing_argument',
  'commander.optionMissingArgument': 'option_missing_argument',
  'commander.missingMandatoryOptionValue': 'missing_mandatory_option_value',
  'commander.conflictingOption': 'conflicting_option',
  'commander.invalidArgument': 'invalid_argument',
};

export function usageError(error: CommanderLike): UsageError {
  const [first = '', ...rest] = error.message.replace(/^error: /, '').split('\n');
  const suggestion = /\(Did you mean (.+)\?\)/.exec(rest.join(' '))?.[1];
  const usage = 'run the command with --help for its usage';
  if (error.code === 'commander.unknownOption') {
    // The option as typed, without any `=value` it carried.
    const typed = /'([^']*)'/.exec(first)?.[1] ?? '';
    const flag = typed.split('=')[0]!;
    for (const [pattern, message, hint] of SECRET_FLAGS) {
      if (pattern.test(flag)) return new UsageError('secret_in_argv', `${flag}: ${message}`, { hint });
    }
    return new UsageError('unknown_option', `unknown option '${flag}'`, {
      hint: suggestion ? `did you mean ${suggestion}? ${usage}` : usage,
    });
  }
  return new UsageError(COMMANDER_CODES[error.code] ?? 'usage', first, {
    hint: suggestion ? `did you mean ${suggestion}? ${usage}` : usage,
  });
}
