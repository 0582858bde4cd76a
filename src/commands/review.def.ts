// loopsign review create | policy | evaluate | request | wait | result | list | state: definitions (handlers in
// review.ts). `create` is the private-review HTTP route; the others speak the workspace MCP endpoint.
import type { Command } from 'commander';
import { credentialOptions, examples, type CredentialOptions, type Lazy } from './define.js';
import type { EvaluateInput } from '../review/invited.js';
import type { PrivateReviewInput } from '../review/private-review.js';

// The core's input types, imported as types only (erased at build time: nothing of the core loads with --help).
export interface ReviewCreateOptions extends CredentialOptions, PrivateReviewInput {}

export interface ReviewEvaluateOptions extends CredentialOptions, EvaluateInput {}

export interface ReviewRequestOptions extends CredentialOptions {
  source?: string;
  suggestion?: string;
  publication?: string;
  redactionSummary?: string;
  confirmNoSensitiveData?: boolean;
}

/** The pinned key that terminal evidence must verify with. */
export interface GateOptions {
  gateKey?: string;
  trustedKeys?: string;
  output?: string;
}

export interface ReviewWaitOptions extends CredentialOptions, GateOptions {
  timeout: string;
  cursor?: string;
}

export interface ReviewResultOptions extends CredentialOptions, GateOptions {
  verify?: boolean;
  run?: string;
  publicKey?: string;
  keyId?: string;
  sessionCookieFile?: string;
  sessionCookieEnv?: string;
}

export interface ReviewListOptions extends CredentialOptions {
  limit?: string;
  cursor?: string;
  all?: boolean;
}

const gateOptions = (cmd: Command) =>
  cmd
    .option(
      '--trusted-keys <file>',
      'a saved trusted-keys document (`loopsign evidence keys --out FILE`): its human_review_gate keys verify the review evidence',
    )
    .option('--gate-key <pin>', 'or one pinned review-gate key: an .spki.txt pin file or its base64url line')
    .option(
      '--output <file>',
      "the output you will release; its SHA-256 must be the evidence's outputCommitment (default: the text journaled by `review evaluate`)",
    );

const APPROVAL =
  '\nExit 0 only for approval (review.md §5.6.4): completed, signed authorized_positive evidence verified with the pinned\ngate key, for this very output. Pending, inconclusive, rejected, failed, cancelled, skipped, a timeout or anything\nunverifiable is exit 7 with the state named; evidence that does not verify is exit 8; evidence for another review\nor output is refused (exit 5).\n';

export function defineReview(program: Command, lazy: Lazy): void {
  const review = program
    .command('review')
    .description('invited workspace review: private reviews, and the review client over the workspace MCP');
  const load = () => import('./review.js');

  credentialOptions(
    review
      .command('create')
      .description('create a private review of a source and a suggestion artifact (HTTP; idempotent by its key)')
      .requiredOption('--project <id>', 'a project `projects list` returns (hap_ + 32 hex)')
      .requiredOption('--integration <id>', 'the owner-configured integration')
      .requiredOption('--profile <id@version>', 'the saved request profile and its version, e.g. rrp_support@3')
      .requiredOption('--profile-hash <sha256:hex>', 'the request profile hash, sha256: + 64 hex')
      .requiredOption('--cohort <id>', 'the cohort of invited reviewers')
      .requiredOption('--data-classification <c>', 'internal, confidential, restricted or regulated')
      .requiredOption('--source <file>', 'the source artifact (sent as base64 transport bytes)')
      .requiredOption('--suggestion <file>', 'the suggestion artifact')
      .option('--source-type <media type>', "the source's media type (default: detected from its bytes)")
      .option('--suggestion-type <media type>', "the suggestion's media type (default: detected from its bytes)")
      .option('--idempotency-key <key>', '8 … 160 of [A-Za-z0-9._:-] (default: generated, journaled and reused on rerun)'),
  )
    .addHelpText(
      'after',
      examples([
        'loopsign review create --project hap_42d935c016f44c96b1496b9995ef1de6 --integration agi_d819e8d641eb4786930dc8b26a9dfb37 --profile rrp_support@1 --profile-hash sha256:02e2… --cohort hacoh_team --data-classification confidential --source ticket.txt --suggestion reply.txt --api-key-file ~/.rateloop-key',
      ]) + '\nThe whole request must fit 64 KiB (checked before sending). A key reused with another payload is refused (exit 2).\n',
    )
    .action(lazy(load, (m) => m.reviewCreate));

  credentialOptions(
    review.command('policy').description('the bound agent context: workflows, request profile, authority (rateloop_get_agent_context)'),
  )
    .addHelpText('after', examples(['loopsign review policy --api-key-file ~/.rateloop-key']))
    .action(lazy(load, (m) => m.reviewPolicy));

  credentialOptions(
    review
      .command('evaluate')
      .description("record one output and get the owner policy's decision (rateloop_evaluate_review_requirement); sends only hashes")
      .requiredOption('--external-id <id>', 'your stable id for this one output (retries reuse it)')
      .requiredOption('--workflow <key>', "the workflow key (in the integration's allow-list)")
      .requiredOption('--risk-tier <tier>', 'e.g. low, medium, high, critical')
      .requiredOption('--source <file>', 'the exact reviewer-visible request (UTF-8, ≤ 3,000 characters)')
      .requiredOption('--suggestion <file>', 'the exact output awaiting release (UTF-8, ≤ 3,000 characters)')
      .option('--source-reference <ref>', 'an opaque reference for the source (default loopsign:<external id>)')
      .option('--source-type <media type>', "the source's media type for a private review (default text/plain)")
      .option('--suggestion-type <media type>', "the suggestion's media type for a private review (default text/plain)")
      .option('--confidence-bps <n>', "the agent's declared confidence, 0 … 10000")
      .option('--critical-risk', 'mark the output critical')
      .option('--metadata-incomplete', 'say the metadata is incomplete')
      .option('--execution <file>', 'the execution provenance as JSON (review.md §5.5.4)')
      .option('--model <provider/model>', 'or: one primary generation span of this model')
      .option('--question <prompt>', 'the binary question, when the profile lets the agent ask it')
      .option('--positive-label <label>', 'with --question')
      .option('--negative-label <label>', 'with --question'),
  )
    .addHelpText(
      'after',
      examples([
        'loopsign review evaluate --external-id ticket-1001 --workflow support-reply --risk-tier high --source ticket.txt --suggestion reply.txt --model openai/gpt-5.1 --api-key-file ~/.rateloop-key',
      ]),
    )
    .action(lazy(load, (m) => m.reviewEvaluate));

  credentialOptions(
    review
      .command('request')
      .description('route the review of an evaluated output with the exact committed text (rateloop_request_review)')
      .argument('<opportunityId>', 'aop_ + 40 hex, from `review evaluate`')
      .option('--source <file>', 'the exact source text (default: journaled by `review evaluate`)')
      .option('--suggestion <file>', 'the exact output text (default: journaled by `review evaluate`)')
      .option('--publication <kind>', 'public lanes: public, synthetic or redacted')
      .option('--redaction-summary <text>', 'with --publication redacted')
      .option('--confirm-no-sensitive-data', 'public lanes: confirm the material holds no sensitive data'),
  )
    .addHelpText('after', examples(['loopsign review request aop_c5644f2f47a027fc60cbd6ffb2aae8ad607bed4c --api-key-file ~/.rateloop-key']))
    .action(lazy(load, (m) => m.reviewRequest));

  gateOptions(
    credentialOptions(
      review
        .command('wait')
        .description('follow a review with the inner wait cursor to its result (rateloop_wait_for_review); only approval is success')
        .argument('<opportunityId>', 'aop_ + 40 hex')
        .option('--timeout <seconds>', 'give up after this long (exit 7; never a new review)', '600')
        .option('--cursor <cursor>', 'resume from the cursor an earlier wait printed'),
    ),
  )
    .addHelpText(
      'after',
      examples([
        'loopsign review wait aop_c5644f2f47a027fc60cbd6ffb2aae8ad607bed4c --trusted-keys trusted-keys.json --api-key-file ~/.rateloop-key',
      ]) + APPROVAL,
    )
    .action(lazy(load, (m) => m.reviewWait));

  gateOptions(
    credentialOptions(
      review
        .command('result')
        .description("the review's result (rateloop_get_review_result), judged by §5.6.4; --verify also verifies its run's evidence packet")
        .argument('<opportunityId>', 'aop_ + 40 hex')
        .option('--verify', "fetch and verify the evidence packet of the review's run (browser session cookie)")
        .option('--run <runId>', "with --verify: the run (default: derived from the private review's delivery)")
        .option('--public-key <pin>', 'with --verify: the pinned packet key, instead of --trusted-keys')
        .option('--key-id <id>', 'with --public-key: its key id')
        .option('--session-cookie-file <file>', 'with --verify: a file holding the __Host-rateloop-session cookie')
        .option('--session-cookie-env <name>', 'with --verify: the NAME of a variable holding that cookie'),
    ),
  )
    .addHelpText(
      'after',
      examples([
        'loopsign review result aop_c5644f2f47a027fc60cbd6ffb2aae8ad607bed4c --trusted-keys trusted-keys.json --verify --session-cookie-env RATELOOP_SESSION --api-key-file ~/.rateloop-key',
      ]) + APPROVAL,
    )
    .action(lazy(load, (m) => m.reviewResult));

  credentialOptions(
    review
      .command('list')
      .description('open reviews of this integration, to continue after a restart (rateloop_list_open_reviews)')
      .option('--limit <n>', 'items per page, 1 … 50')
      .option('--cursor <cursor>', 'the nextCursor of an earlier listing')
      .option('--all', 'follow nextCursor to the last page'),
  )
    .addHelpText('after', examples(['loopsign review list --all --api-key-file ~/.rateloop-key']))
    .action(lazy(load, (m) => m.reviewList));

  credentialOptions(
    review
      .command('state')
      .description('the review rate and human agreement of a scope (rateloop_get_assurance_state)')
      .argument('<scopeId>', 'evs_ + 40 hex, from `review evaluate`'),
  )
    .addHelpText('after', examples(['loopsign review state evs_683b1fc3e0ce6052ae8ba83ffd48280965814118 --api-key-file ~/.rateloop-key']))
    .action(lazy(load, (m) => m.reviewState));
}
