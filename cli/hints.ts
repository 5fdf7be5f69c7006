/**
 * Every CLI error ends with what to do next. Messages that already say it are printed as
 * they are; the others get the hint for their error code.
 */
import { HookError } from '../functions/core/errors';
import { DEFAULT_REGION } from './context';
import { asInvoked } from './invocation';
import { terminalSafe } from './output';
import { THROTTLE_ERRORS } from '../functions/aws/throttling';

/** A missing table or queue: where to look (the SDK's error, or the CLI's own not_deployed). */
const NOT_DEPLOYED = `The deployment's tables or queue are not there: is the stage deployed in this region (--stage, --region, or the aws section of config.yaml)? 'hookagent status' checks it and names the region (${DEFAULT_REGION} when neither --region nor aws.region names one, as for npx osls deploy); 'npx osls deploy' deploys it.`;

const HINTS: Record<string, string> = {
  not_deployed: NOT_DEPLOYED,
  subscription_not_found: "See the names with 'hookagent webhook list', or create one with 'hookagent webhook subscribe <name>'.",
  subscription_exists: "Change it with 'hookagent webhook update <name> …', or pick another name.",
  event_not_found: "Find event ids with 'hookagent webhook events <name>' (or in 'hookagent console').",
  config_invalid: 'Fix config.yaml (the message names the key), then run the command again.',
  unavailable: 'The store did not answer: check that it is reachable (AWS credentials and region, or the local data directory) and try again.',
  service_unreachable: "Start the service with 'hookagent serve', or pass --url.",
  listen_failed: 'Choose another --port, or stop what is using it.',
};

/** AWS errors of a CLI acting on a stage, whose message alone does not say what is wrong. */
const AWS_HINTS: Array<[RegExp, string]> = [
  [/ResourceNotFoundException|QueueDoesNotExist/, NOT_DEPLOYED],
  [/Region is missing/, 'No AWS region: set aws.region in config.yaml, pass --region <region>, or set AWS_REGION.'],
  [/CredentialsProviderError|Could not load credentials/, 'No AWS credentials found: set AWS_PROFILE (aws sso login / aws configure), or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, and run the command again.'],
  [/ExpiredToken|RequestExpired|TokenRefreshRequired|security token included in the request is (expired|invalid)/i, 'The AWS credentials have expired or are not valid: renew them (for example aws sso login, or new keys) and run the command again.'],
  [new RegExp(`Throttl|${THROTTLE_ERRORS.join('|')}`), 'AWS is throttling these calls (other tools share the account\'s rate): wait a little and run the command again.'],
];

// "needs the config section …", "resume", "write 1s", or a command to run already say what to do (hunt 5 D12).
const SAYS_WHAT_NEXT = /\b(run|use|pass|choose|create|start|add|set|fix|see|try|check|open|generate|give|remove|pick|change|find|list|resume|needs|write)\b|\bhookagent [a-z]/i;

export function hintFor(code: string, message: string): string | undefined {
  const aws = AWS_HINTS.find(([pattern]) => pattern.test(message));
  if (aws) return aws[1];
  if (SAYS_WHAT_NEXT.test(message)) return undefined;
  return HINTS[code] ?? 'Run the command with --help for its options and an example.';
}

/** `error: <message>\n<what to do next>\n` for stderr. */
export function formatError(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const code = error instanceof HookError ? error.code : 'error';
  // An SDK error that got through unwrapped says what it is in its name (QueueDoesNotExist), not its message.
  const named = error instanceof Error && !(error instanceof HookError) && error.name !== 'Error' ? `${error.name}: ${message}` : message;
  const hint = hintFor(code, named);
  return asInvoked(`error: ${terminalSafe(message, false)}\n${hint ? `${hint}\n` : ''}`);
}
