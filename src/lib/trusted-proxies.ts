import ipaddr from 'ipaddr.js';

/**
 * The client's address behind reverse proxies Lumen trusts (LUMEN_TRUSTED_PROXIES: a
 * comma-separated list of CIDRs or addresses). A request whose TCP peer is trusted is
 * read from its forwarding headers, from the right: the rightmost address that is not
 * itself a trusted proxy is the client (each proxy appends the address it received the
 * request from, so everything to the left of that could be written by the client and is
 * never believed). `Forwarded` (RFC 7239) is read when present, else `X-Forwarded-For`.
 * A peer that is not trusted is the client, whatever headers it sends.
 */
export class TrustedProxies {
  private readonly ranges: [ipaddr.IPv4 | ipaddr.IPv6, number][];

  constructor(cidrs: readonly string[]) {
    this.ranges = cidrs.map(parseRange);
  }

  get configured(): boolean {
    return this.ranges.length > 0;
  }

  /** Whether an address (as the socket reports it, IPv4-mapped IPv6 included) is a trusted proxy. */
  trusts(address: string): boolean {
    const ip = parseAddress(address);
    if (!ip) return false;
    return this.ranges.some(([range, bits]) => ip.kind() === range.kind() && ip.match(range as never, bits));
  }

  /** The client's address for a request from `peer` with these headers. */
  clientOf(peer: string, headers: { forwarded?: string | string[]; 'x-forwarded-for'?: string | string[] }): string {
    if (!this.trusts(peer)) return normalize(peer);
    const hops = forwardedHops(headers);
    for (let i = hops.length - 1; i >= 0; i--) {
      const hop = parseAddress(hops[i]!);
      // A hop that is not an address (obfuscated, "unknown", garbage): nothing left to believe.
      if (!hop) break;
      if (!this.trusts(hop.toString())) return hop.toString();
    }
    // Every hop was a trusted proxy (or there were none readable): the peer is all that is known.
    return normalize(peer);
  }
}

function parseRange(text: string): [ipaddr.IPv4 | ipaddr.IPv6, number] {
  const t = text.trim();
  if (t.includes('/')) {
    const [ip, bits] = ipaddr.parseCIDR(t);
    return [ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress() ? (ip as ipaddr.IPv6).toIPv4Address() : ip, ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress() ? bits - 96 : bits];
  }
  const ip = parseAddress(t);
  if (!ip) throw new Error(`"${t}" is not an address or CIDR`);
  return [ip, ip.kind() === 'ipv4' ? 32 : 128];
}

/** An address as sockets and headers write it (IPv4-mapped IPv6 read as IPv4; brackets and a port taken off). */
function parseAddress(text: string): ipaddr.IPv4 | ipaddr.IPv6 | null {
  let t = text.trim().replace(/^"|"$/g, '');
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(t);
  if (bracketed) t = bracketed[1]!;
  else if (/^\d+\.\d+\.\d+\.\d+:\d+$/.test(t)) t = t.slice(0, t.lastIndexOf(':'));
  if (!ipaddr.isValid(t)) return null;
  const ip = ipaddr.parse(t);
  return ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress() ? (ip as ipaddr.IPv6).toIPv4Address() : ip;
}

function normalize(address: string): string {
  return parseAddress(address)?.toString() ?? address;
}

/** The `for=` values of `Forwarded`, else the entries of `X-Forwarded-For`, left to right. */
function forwardedHops(headers: { forwarded?: string | string[]; 'x-forwarded-for'?: string | string[] }): string[] {
  const forwarded = [headers.forwarded ?? []].flat().join(',');
  if (forwarded.trim() !== '') {
    return forwarded
      .split(',')
      .map((element) => /(?:^|;)\s*for=("[^"]*"|[^;,\s]*)/i.exec(element)?.[1] ?? '')
      .filter((v) => v !== '');
  }
  return [headers['x-forwarded-for'] ?? []]
    .flat()
    .join(',')
    .split(',')
    .map((v) => v.trim())
    .filter((v) => v !== '');
}

/** LUMEN_TRUSTED_PROXIES as written, or the reason it cannot be read. */
export function parseTrustedProxies(raw: string | undefined): { cidrs: string[] } | { problem: string } {
  const items = (raw ?? '').split(',').map((s) => s.trim()).filter(Boolean);
  for (const item of items) {
    try {
      parseRange(item);
    } catch {
      return { problem: `LUMEN_TRUSTED_PROXIES must list CIDRs or addresses separated by commas, such as 10.0.0.0/8,fd00::/8 (got "${item}")` };
    }
  }
  return { cidrs: items };
}
