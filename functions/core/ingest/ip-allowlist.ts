/** `webhooks.allowed_ips`: is a source address inside one of the CIDR ranges? */
import ipaddr from 'ipaddr.js';

export type AllowList = Array<[ipaddr.IPv4 | ipaddr.IPv6, number]>;

/** Entries as config loading wrote them (formats.ts `parseCidr`: IPv4-mapped entries already in their IPv4 form). */
export function compileAllowList(cidrs: readonly string[]): AllowList {
  return cidrs.map((cidr) => ipaddr.parseCIDR(cidr));
}

/**
 * IPv4-mapped IPv6 addresses (`::ffff:1.2.3.4`, as Node sockets report them) count as
 * IPv4, as mapped entries do. IPv6 ranges hold IPv6 senders only: `::/0` does not let
 * every IPv4 sender in (Node's net.BlockList would).
 */
export function isAllowed(list: AllowList, sourceIp: string | undefined): boolean {
  if (!sourceIp || !ipaddr.isValid(sourceIp)) return false;
  const address = ipaddr.process(sourceIp);
  return list.some(([range, bits]) => address.kind() === range.kind() && address.match(range, bits));
}
