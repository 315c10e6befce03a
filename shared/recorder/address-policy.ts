import ipaddr from "ipaddr.js";

/**
 * Which addresses the recorder may connect to: public unicast only. Loopback, private, link-local
 * (169.254.169.254, the metadata service, included), CGNAT, multicast, broadcast, unspecified,
 * reserved and documentation ranges, IPv6 unique-local and link-local, and the IPv6 forms that
 * embed an IPv4 address (mapped, translated, 6to4, Teredo) are refused. Classification is
 * ipaddr.js's, not hand-written ranges.
 */
export type AddressVerdict = { allowed: true } | { allowed: false; why: string };

/** IPv6 forms that carry an IPv4 address: judged by the address they carry. */
function embeddedIPv4(address: ipaddr.IPv6): ipaddr.IPv4 | undefined {
  const range = address.range();
  if (range === "ipv4Mapped") return address.toIPv4Address();
  if (range === "rfc6052" || range === "rfc6145") {
    const bytes = address.toByteArray().slice(-4);
    return ipaddr.fromByteArray(bytes) as ipaddr.IPv4;
  }
  return undefined;
}

/**
 * @example classifyAddress("169.254.169.254") // { allowed: false, why: "169.254.169.254 is linkLocal" }
 */
export function classifyAddress(text: string): AddressVerdict {
  const literal = text.startsWith("[") && text.endsWith("]") ? text.slice(1, -1) : text;
  if (!ipaddr.isValid(literal)) return { allowed: false, why: `${text} is not an IP address` };
  const address = ipaddr.parse(literal);
  if (address.kind() === "ipv6") {
    const inner = embeddedIPv4(address as ipaddr.IPv6);
    if (inner) {
      const verdict = classifyAddress(inner.toString());
      return verdict.allowed
        ? verdict
        : { allowed: false, why: `${text} embeds ${inner.toString()}: ${verdict.why}` };
    }
  }
  const range = address.range();
  return range === "unicast" ? { allowed: true } : { allowed: false, why: `${literal} is ${range}` };
}

/** Whether a URL host is an IP literal (after the URL parser normalised decimal, octal and hex forms). */
export function isIpLiteral(hostname: string): boolean {
  const bare = hostname.startsWith("[") ? hostname.slice(1, -1) : hostname;
  return ipaddr.isValid(bare);
}
