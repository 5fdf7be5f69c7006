/**
 * The error names AWS services answer a throttled call with: retried by the AWS JSON client
 * (aws-json.ts) and named as throttling by the CLI's hints (cli/hints.ts). No SDK import:
 * the CLI reads it at start.
 */
export const THROTTLE_ERRORS = [
  'ThrottlingException', 'Throttling', 'ProvisionedThroughputExceededException', 'RequestLimitExceeded', 'RequestThrottled',
  'RequestThrottledException', 'LimitExceededException', 'KMSThrottlingException', 'TooManyRequestsException', 'SlowDown',
] as const;
