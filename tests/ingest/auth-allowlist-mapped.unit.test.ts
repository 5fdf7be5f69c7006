/**
 * `webhooks.allowed_ips` and IPv4-mapped IPv6 addresses (`::ffff:a.b.c.d`), the form a
 * dual-stack socket reports IPv4 clients in (hunt 12 D2): an IPv4 address and its mapped
 * form are one address, on either side, and a mapped range means the IPv4 range it maps.
 */
import { parseCidr } from '../../functions/core/config/formats';
import { compileAllowList, isAllowed } from '../../functions/core/ingest/ip-allowlist';
import { invalid, valid } from '../support/parse-config';

const allows = (entries: string[], source: string) => isAllowed(compileAllowList(entries.map((e) => parseCidr(e) ?? e)), source);

describe('config: a mapped entry is kept in its IPv4 spelling', () => {
  test.each([
    ['::ffff:127.0.0.1', '127.0.0.1/32'],
    ['::FFFF:7f00:1', '127.0.0.1/32'],
    ['::ffff:140.82.112.0/116', '140.82.112.0/20'],
    ['::ffff:127.0.0.0/104', '127.0.0.0/8'],
    ['::ffff:0.0.0.0/96', '0.0.0.0/0'],
  ])('%s → %s', (entry, normalised) => {
    expect(parseCidr(entry)).toBe(normalised);
    expect(valid(`webhooks: { allowed_ips: ["${entry}"] }`).webhooks.allowed_ips).toEqual([normalised]);
  });

  test('other entries are unchanged', () => {
    expect(['140.82.112.0/20', '2a0a:a440::/29', '::/0', '::/80', '64:ff9b::/96'].map(parseCidr)).toEqual(['140.82.112.0/20', '2a0a:a440::/29', '::/0', '::/80', '64:ff9b::/96']);
  });

  test.each(['::ffff:0:0/80', '::ffff:127.0.0.1/95', '::ffff:127.0.0.1/129'])('a mapped entry that is no IPv4 range (%s) is refused, naming the key', (entry) => {
    expect(parseCidr(entry)).toBeUndefined();
    const error = invalid(`webhooks: { allowed_ips: [192.0.2.1, "${entry}"] }`);
    expect(error.issues).toEqual([{ path: 'webhooks.allowed_ips[1]', message: expect.stringContaining(`'${entry}'`) }]);
  });
});

describe('matching: an IPv4 sender and its mapped form are the same sender', () => {
  test.each([
    [['::ffff:127.0.0.1'], '127.0.0.1', true],
    [['::ffff:127.0.0.1'], '::ffff:127.0.0.1', true],
    [['::ffff:127.0.0.0/104'], '127.9.9.9', true],
    [['::ffff:127.0.0.0/104'], '::ffff:127.9.9.9', true],
    [['::ffff:127.0.0.0/104'], '128.0.0.1', false],
    [['127.0.0.0/8'], '::ffff:127.0.0.1', true],
    [['127.0.0.0/8'], '::ffff:7f00:1', true],
    [['140.82.112.0/20'], '::ffff:140.82.128.1', false],
    // IPv6 ranges hold IPv6 senders only, as before: `::/0` does not let every IPv4 sender in.
    [['::/0'], '203.0.113.9', false],
    [['::/0'], '::ffff:203.0.113.9', false],
    [['0.0.0.0/0'], '2001:db8::1', false],
    [['2a0a:a440::/29'], '2a0a:a440:1::5', true],
    [['2a0a:a440::/29'], '140.82.112.1', false],
  ])('%j lets %s in: %s', (entries, source, expected) => {
    expect(allows(entries, source)).toBe(expected);
  });

  test('no address, or one that is not an address, is refused (fail closed)', () => {
    for (const source of [undefined, '', 'localhost', '127.0.0.1:8080', '::ffff:127.0.0.1/128']) expect(allows(['0.0.0.0/0', '::/0'], source as string)).toBe(false);
  });
});
