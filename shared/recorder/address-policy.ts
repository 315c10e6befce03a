import ipaddr from "ipaddr.js";

/**
 * Which addresses the recorder may connect to: public unicast only. Loopback, private, link-local
 * (169.254.169.254, the metadata service, included), CGNAT, multicast, broadcast, unspecified,
 * reserved and documentation ranges, IPv6 unique-local and link-local are refused; an IPv6 form
 * that carries an IPv4 address is judged by that address too. Address classes are ipaddr.js's;
 * only where the IPv4 sits inside each IPv6 form is written here (ipaddr.js decodes two forms).
 */
export type AddressVerdict = { allowed: true } | { allowed: false; why: string };

/** An IPv4 address carried inside an IPv6 one, and the form that carries it. */
interface Embedded {
  form: string;
  ipv4: ipaddr.IPv4;
}

function ipv4At(bytes: number[], offset: number, invert = false): ipaddr.IPv4 {
  const four = bytes.slice(offset, offset + 4).map((b) => (invert ? b ^ 0xff : b));
  return new ipaddr.IPv4(four);
}

/**
 * Every IPv4 address an IPv6 address carries, by form: mapped (`::ffff:0:0/96`), translated
 * (`::ffff:0:0:0/96`), IPv4-compatible (`::/96`), NAT64 (`64:ff9b::/96`, `64:ff9b:1::/48`), 6to4
 * (`2002::/16`), Teredo (`2001::/32`: the server, and the client stored inverted) and ISATAP
 * (`…:0:5efe:a.b.c.d`, `…:200:5efe:a.b.c.d`). The URL parser rewrites `[::127.0.0.1]` to
 * `[::7f00:1]`, which ipaddr.js calls plain unicast: the address inside must be judged too.
 */
function embeddedIPv4(address: ipaddr.IPv6): Embedded[] {
  const bytes = address.toByteArray();
  const words = address.parts;
  const zero = (from: number, to: number) => words.slice(from, to).every((w) => w === 0);
  const found: Embedded[] = [];
  const range = address.range();
  if (range === "ipv4Mapped") found.push({ form: "IPv4-mapped", ipv4: address.toIPv4Address() });
  if (range === "rfc6145") found.push({ form: "IPv4-translated", ipv4: ipv4At(bytes, 12) });
  if (zero(0, 6) && !zero(6, 8)) found.push({ form: "IPv4-compatible", ipv4: ipv4At(bytes, 12) });
  const nat64 = words[0] === 0x64 && words[1] === 0xff9b;
  if (nat64 && zero(2, 6)) found.push({ form: "NAT64", ipv4: ipv4At(bytes, 12) });
  if (nat64 && words[2] === 1) {
    // RFC 8215 local-use NAT64 with a /48 prefix (RFC 6052 §2.2): the IPv4 address straddles the u-octet.
    found.push({
      form: "local NAT64",
      ipv4: new ipaddr.IPv4([bytes[6], bytes[7], bytes[9], bytes[10]] as number[]),
    });
  }
  if (words[0] === 0x2002) found.push({ form: "6to4", ipv4: ipv4At(bytes, 2) });
  if (words[0] === 0x2001 && words[1] === 0) {
    found.push({ form: "Teredo server", ipv4: ipv4At(bytes, 4) });
    found.push({ form: "Teredo client", ipv4: ipv4At(bytes, 12, true) });
  }
  if ((words[4] === 0 || words[4] === 0x200) && words[5] === 0x5efe)
    found.push({ form: "ISATAP", ipv4: ipv4At(bytes, 12) });
  return found;
}

/** IPv6 forms refused whatever they carry: deprecated, or local by definition. */
const REFUSED_FORMS = new Set(["IPv4-compatible", "local NAT64"]);

/**
 * @example classifyAddress("169.254.169.254") // { allowed: false, why: "169.254.169.254 is linkLocal" }
 * @example classifyAddress("::a9fe:a9fe") // refused: it carries 169.254.169.254 (IPv4-compatible)
 */
export function classifyAddress(text: string): AddressVerdict {
  const literal = text.startsWith("[") && text.endsWith("]") ? text.slice(1, -1) : text;
  if (!ipaddr.isValid(literal)) return { allowed: false, why: `${text} is not an IP address` };
  const address = ipaddr.parse(literal);
  if (address.kind() === "ipv6") {
    for (const { form, ipv4 } of embeddedIPv4(address as ipaddr.IPv6)) {
      const verdict = classifyAddress(ipv4.toString());
      if (!verdict.allowed)
        return { allowed: false, why: `${literal} carries ${ipv4.toString()} (${form}): ${verdict.why}` };
      if (REFUSED_FORMS.has(form)) return { allowed: false, why: `${literal} is in the ${form} form` };
      // A mapped address is a connection to the IPv4 address itself: its verdict is that address's.
      if (form === "IPv4-mapped") return verdict;
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

/**
 * Whether a recording URL's host is one of `hosts` or under one (on a label boundary): only then
 * does its first request carry the app's `apiKey`. A URL that does not parse carries nothing.
 *
 * @example mayCarryApiKey("https://app1.api-us.cometchat.io/r.mp4", ["cometchat.io"]) // true
 * @example mayCarryApiKey("https://cometchat.io.attacker.example/r.mp4", ["cometchat.io"]) // false
 */
export function mayCarryApiKey(url: string, hosts: readonly string[]): boolean {
  let hostname: string;
  try {
    hostname = new URL(url).hostname
      .toLowerCase()
      .replace(/\.$/, "")
      .replace(/^\[|\]$/g, "");
  } catch {
    return false;
  }
  return hosts.some((entry) => {
    const host = entry.toLowerCase();
    return hostname === host || hostname.endsWith(`.${host}`);
  });
}
