// loopsign config show: definition (handler in config.ts).
import type { Command } from 'commander';
import { examples, type Lazy } from './define.js';

export function defineConfig(program: Command, lazy: Lazy): void {
  const config = program.command('config').description('show the resolved configuration');
  config
    .command('show')
    .description('print every setting with where it came from (flag, env, config file, default); secrets masked')
    .addHelpText('after', examples(['loopsign config show', 'loopsign --json --chain-id 31337 config show']))
    .action(
      lazy(
        () => import('./config.js'),
        (m) => m.configShow,
      ),
    );
}
