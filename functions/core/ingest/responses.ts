/** The answers of DESIGN §2.1: JSON with a `status`, errors as `{status, code, message}`. */
export interface Reply {
  status: number;
  headers: Record<string, string>;
  body: Record<string, unknown>;
}

const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8' };

export function reply(status: number, body: Record<string, unknown>, headers: Record<string, string> = {}): Reply {
  return { status, headers: { ...JSON_HEADERS, ...headers }, body };
}

export function errorReply(status: number, code: string, message: string, headers: Record<string, string> = {}): Reply {
  return reply(status, { status: 'error', code, message }, headers);
}

/** Exact messages users look up in the docs. */
export const MESSAGES = {
  signatureInvalid: 'Webhook signature invalid',
  payloadTooLarge: 'Payload too large',
  eventNotHandled: 'Event not handled',
  filteredOut: 'Filtered out',
} as const;

export const RETRY_AFTER_SECONDS = 5;

export const errors = {
  signatureInvalid: () => errorReply(401, 'signature_invalid', MESSAGES.signatureInvalid),
  ipNotAllowed: () => errorReply(403, 'ip_not_allowed', 'Source address not allowed'),
  payloadTooLarge: (limit: number) => errorReply(413, 'payload_too_large', MESSAGES.payloadTooLarge, { 'x-max-payload-size': String(limit) }),
  invalidJson: (detail: string) => errorReply(400, 'invalid_json', `Body is not a JSON object: ${detail}`),
  invalidEvent: (detail: string) => errorReply(400, 'invalid_event', detail),
  subscriptionNotFound: (name: string | undefined) =>
    errorReply(404, 'subscription_not_found', name ? `No subscription named '${name}'` : 'No subscription with that name'),
  notFound: () => errorReply(404, 'not_found', 'No such endpoint; webhooks go to /webhooks/github, /webhooks/gitlab or /webhooks/custom/<name>'),
  methodNotAllowed: (allow: string) => errorReply(405, 'method_not_allowed', `Method not allowed; use ${allow}`, { allow }),
  unavailable: () =>
    errorReply(503, 'unavailable', 'Service temporarily unavailable; retry later', { 'retry-after': String(RETRY_AFTER_SECONDS) }),
  inProgress: () =>
    errorReply(503, 'in_progress', 'A request with this delivery id is being processed; retry later', { 'retry-after': String(RETRY_AFTER_SECONDS) }),
};
