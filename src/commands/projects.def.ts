// loopsign projects list | create | show: definitions (handlers in projects.ts).
import type { Command } from 'commander';
import { credentialOptions, examples, type CredentialOptions, type Lazy } from './define.js';

export interface ProjectsCreateOptions extends CredentialOptions {
  name?: string;
  description?: string;
  dataClassification?: string;
  retentionDays?: string;
}

export function defineProjects(program: Command, lazy: Lazy): void {
  const projects = program.command('projects').description('workspace review projects (workspace API key)');
  credentialOptions(projects.command('list').description('the projects this key holds, and the workspace id'))
    .addHelpText('after', examples(['loopsign projects list --api-key-file ~/.rateloop-key']))
    .action(
      lazy(
        () => import('./projects.js'),
        (m) => m.projectsList,
      ),
    );
  credentialOptions(
    projects
      .command('create')
      .description('create a private project; journaled, so a rerun never makes a second one')
      .requiredOption('--name <name>', 'the project name (1 … 160 characters)')
      .requiredOption('--data-classification <c>', 'public, internal, confidential, restricted or regulated')
      .requiredOption('--retention-days <days>', 'how long the service keeps its data, 1 … 3650')
      .option('--description <text>', 'a description (1 … 2000 characters)'),
  )
    .addHelpText(
      'after',
      examples([
        'loopsign projects create --name "Support replies" --data-classification confidential --retention-days 90 --api-key-env RATELOOP_KEY',
      ]) +
        '\nThe service creates a new project for every request it accepts. After a failure with no clear answer, run the\nsame command again: loopsign lists the projects first and adopts the one that was made.\n',
    )
    .action(
      lazy(
        () => import('./projects.js'),
        (m) => m.projectsCreate,
      ),
    );
  credentialOptions(
    projects.command('show').description('a project with its suites, policies and runs').argument('<projectId>', 'hap_ + 32 hex'),
  )
    .addHelpText('after', examples(['loopsign projects show hap_42d935c016f44c96b1496b9995ef1de6 --api-key-file ~/.rateloop-key']))
    .action(
      lazy(
        () => import('./projects.js'),
        (m) => m.projectsShow,
      ),
    );
}
