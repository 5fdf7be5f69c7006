/** IAM's resource matching, for tests that check recorded AWS calls against a policy. */

/** Whether `value` matches an IAM resource pattern: `*` any characters (also `/`), `?` one. */
export function iamMatches(pattern: string, value: string): boolean {
  const source = pattern.split('').map((c) => (c === '*' ? '.*' : c === '?' ? '.' : c.replace(/[.+^${}()|[\]\\]/g, '\\$&'))).join('');
  return new RegExp(`^${source}$`).test(value);
}

export interface PolicyStatement {
  Effect: string;
  Action: string | string[];
  Resource: string | string[];
}

/** Whether a statement of `statements` allows `action` on the resource ARN `arn`. */
export function policyAllows(statements: PolicyStatement[], action: string, arn: string): boolean {
  return statements.some((s) => s.Effect === 'Allow'
    && [s.Action].flat().some((a) => iamMatches(a, action))
    && [s.Resource].flat().some((r) => iamMatches(r, arn)));
}
