/**
 * Which IP addresses an outgoing upstream call may reach. Providers choose the URLs we fetch, so anything that is
 * not ordinary public unicast (loopback, private networks, cloud metadata, special-purpose blocks) is refused.
 * The tables follow the IANA IPv4/IPv6 special-purpose address registries, erring on the side of refusing.
 */
import { BlockList, isIP } from 'node:net';

const IPV4_NON_PUBLIC: readonly (readonly [string, number])[] = [
  ['0.0.0.0', 8], // "this network"; 0.0.0.0 reaches the local host on Linux
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // carrier-grade NAT (often internal infrastructure)
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local, including cloud metadata at 169.254.169.254
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation (TEST-NET-1)
  ['192.88.99.0', 24], // deprecated 6to4 relay anycast
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation (TEST-NET-2)
  ['203.0.113.0', 24], // documentation (TEST-NET-3)
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, including broadcast 255.255.255.255
];

const IPV6_NON_PUBLIC: readonly (readonly [string, number])[] = [
  ['::', 96], // unspecified, loopback and the deprecated IPv4-compatible block (mapped addresses are handled first)
  ['::ffff:0:0:0', 96], // IPv4-translated (SIIT)
  ['64:ff9b::', 96], // NAT64 well-known prefix: would reach IPv4 through a translator we cannot see
  ['64:ff9b:1::', 48], // NAT64 local-use
  ['100::', 64], // discard-only
  ['2001::', 23], // IETF protocol assignments (Teredo, benchmarking, ORCHID, ...)
  ['2001:db8::', 32], // documentation
  ['2002::', 16], // 6to4: embeds an IPv4 address we would not otherwise check
  ['3fff::', 20], // documentation (RFC 9637)
  ['5f00::', 16], // SRv6 SIDs
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // deprecated site-local
  ['ff00::', 8], // multicast
];

const blocked = new BlockList();
for (const [network, prefix] of IPV4_NON_PUBLIC) blocked.addSubnet(network, prefix, 'ipv4');
for (const [network, prefix] of IPV6_NON_PUBLIC) blocked.addSubnet(network, prefix, 'ipv6');

// Only global unicast (2000::/3) is public at all; the blocks above carve the special ranges out of it.
const ipv6GlobalUnicast = new BlockList();
ipv6GlobalUnicast.addSubnet('2000::', 3, 'ipv6');

/** `::ffff:a.b.c.d` (any spelling) → `a.b.c.d`; undefined for other IPv6 addresses. */
function embeddedMappedIPv4(ipv6: string): string | undefined {
  let canonical: string;
  try {
    // The WHATWG host parser canonicalises every spelling (::ffff:127.0.0.1, 0:0:0:0:0:ffff:7f00:1) to ::ffff:7f00:1.
    canonical = new URL(`http://[${ipv6}]/`).hostname;
  } catch {
    return undefined;
  }
  const match = /^\[::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})\]$/.exec(canonical);
  if (!match) return undefined;
  const high = parseInt(match[1]!, 16);
  const low = parseInt(match[2]!, 16);
  return [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');
}

/**
 * True for loopback, private, link-local, CGNAT, unspecified, multicast, reserved, documentation, benchmark,
 * cloud-metadata (169.254.169.254 is link-local) and IPv6 ULA/link-local/loopback/unspecified/NAT64 ranges;
 * IPv4-mapped IPv6 (::ffff:a.b.c.d and ::ffff:7f00:1 forms) is judged by its embedded IPv4 address.
 * Anything that is not an IP address at all counts as non-public (fail closed).
 */
export function isNonPublicAddress(ip: string): boolean {
  let address = ip.trim();
  if (address.startsWith('[') && address.endsWith(']')) address = address.slice(1, -1);
  // A zone index (fe80::1%eth0) names an interface, not a different address.
  const zone = address.indexOf('%');
  if (zone !== -1) address = address.slice(0, zone);

  const family = isIP(address);
  if (family === 4) return blocked.check(address, 'ipv4');
  if (family !== 6) return true;

  const mapped = embeddedMappedIPv4(address);
  if (mapped !== undefined) return isNonPublicAddress(mapped);
  return !ipv6GlobalUnicast.check(address, 'ipv6') || blocked.check(address, 'ipv6');
}
