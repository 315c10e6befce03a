import type { LookupAddress } from "node:dns";
import { describe, expect, it } from "vitest";
import { RecordingFetchError } from "../../shared/platform/errors";
import { classifyAddress, mayCarryApiKey } from "../../shared/recorder/address-policy";
import { pinnedLookup, pinTarget, type Resolver } from "../../shared/recorder/safe-fetch";

/** A resolver stub: no test here sends a packet anywhere. */
function stubResolver(table: Record<string, string[]>): Resolver & { calls: string[] } {
  const calls: string[] = [];
  const resolver = async (hostname: string): Promise<LookupAddress[]> => {
    calls.push(hostname);
    const answers = table[hostname];
    if (!answers) throw new Error("ENOTFOUND");
    return answers.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
  };
  return Object.assign(resolver, { calls });
}

const resolver = stubResolver({
  "metadata.attacker.example": ["169.254.169.254"],
  "internal.attacker.example": ["10.1.2.3"],
  "loopback.attacker.example": ["127.0.0.1"],
  "cgnat.attacker.example": ["100.64.1.1"],
  "v6local.attacker.example": ["fd12:3456::1"],
  "v6linklocal.attacker.example": ["fe80::1"],
  "mapped.attacker.example": ["::ffff:10.0.0.1"],
  "mixed.attacker.example": ["93.184.216.34", "127.0.0.1"],
  "multicast.attacker.example": ["239.1.1.1"],
  "recordings.example.com": ["93.184.216.34"],
});

const OFF = { allowHttp: false, allowedHosts: [], resolver };

const HOSTILE: Array<[string, string]> = [
  ["https://127.0.0.1/r.mp4", "refused-address"],
  ["https://127.1/r.mp4", "refused-address"],
  ["https://2130706433/r.mp4", "refused-address"],
  ["https://0177.0.0.1/r.mp4", "refused-address"],
  ["https://0x7f.0.0.1/r.mp4", "refused-address"],
  ["https://0x7f000001/r.mp4", "refused-address"],
  ["https://10.0.0.5/r.mp4", "refused-address"],
  ["https://172.16.3.4/r.mp4", "refused-address"],
  ["https://192.168.1.1/r.mp4", "refused-address"],
  ["https://169.254.169.254/latest/meta-data/", "refused-address"],
  ["https://100.64.0.1/r.mp4", "refused-address"],
  ["https://0.0.0.0/r.mp4", "refused-address"],
  ["https://224.0.0.1/r.mp4", "refused-address"],
  ["https://255.255.255.255/r.mp4", "refused-address"],
  ["https://[::1]/r.mp4", "refused-address"],
  ["https://[::]/r.mp4", "refused-address"],
  ["https://[fc00::1]/r.mp4", "refused-address"],
  ["https://[fe80::1]/r.mp4", "refused-address"],
  ["https://[::ffff:127.0.0.1]/r.mp4", "refused-address"],
  ["https://[::ffff:169.254.169.254]/r.mp4", "refused-address"],
  ["https://[64:ff9b::a00:1]/r.mp4", "refused-address"],
  ["https://[2002:7f00:1::]/r.mp4", "refused-address"],
  // Every IPv6 form that carries an IPv4 address, with the metadata address and loopback inside.
  ["https://[::a9fe:a9fe]/latest/meta-data/", "refused-address"],
  ["https://[::a00:1]/r.mp4", "refused-address"],
  ["https://[::127.0.0.1]/r.mp4", "refused-address"],
  ["https://[::169.254.169.254]/latest/meta-data/", "refused-address"],
  ["https://[::ffff:0:a9fe:a9fe]/latest/meta-data/", "refused-address"],
  ["https://[::ffff:0:7f00:1]/r.mp4", "refused-address"],
  ["https://[64:ff9b::a9fe:a9fe]/latest/meta-data/", "refused-address"],
  ["https://[64:ff9b::7f00:1]/r.mp4", "refused-address"],
  ["https://[64:ff9b:1:a9fe:a9:fe00::]/latest/meta-data/", "refused-address"],
  ["https://[64:ff9b:1:7f00:0:100::]/r.mp4", "refused-address"],
  ["https://[2002:a9fe:a9fe::1]/latest/meta-data/", "refused-address"],
  ["https://[2001:0:a9fe:a9fe::1]/latest/meta-data/", "refused-address"],
  ["https://[2001:0:7f00:1::1]/r.mp4", "refused-address"],
  ["https://[2001:0:4136:e378:8000:63bf:5601:5601]/latest/meta-data/", "refused-address"],
  ["https://[2001:0:4136:e378:8000:63bf:80ff:fffe]/r.mp4", "refused-address"],
  ["https://[2001:db8::5efe:a9fe:a9fe]/latest/meta-data/", "refused-address"],
  ["https://[2001:db8::200:5efe:7f00:1]/r.mp4", "refused-address"],
  ["https://[::808:808]/r.mp4", "refused-address"],
  ["https://metadata.attacker.example/r.mp4", "refused-address"],
  ["https://internal.attacker.example/r.mp4", "refused-address"],
  ["https://loopback.attacker.example/r.mp4", "refused-address"],
  ["https://cgnat.attacker.example/r.mp4", "refused-address"],
  ["https://v6local.attacker.example/r.mp4", "refused-address"],
  ["https://v6linklocal.attacker.example/r.mp4", "refused-address"],
  ["https://mapped.attacker.example/r.mp4", "refused-address"],
  ["https://mixed.attacker.example/r.mp4", "refused-address"],
  ["https://multicast.attacker.example/r.mp4", "refused-address"],
  ["http://recordings.example.com/r.mp4", "refused-scheme"],
  ["file:///etc/passwd", "refused-scheme"],
  ["gopher://recordings.example.com/", "refused-scheme"],
  ["ftp://recordings.example.com/r.mp4", "refused-scheme"],
  ["https://user:pass@recordings.example.com/r.mp4", "invalid-url"],
  ["not a url", "invalid-url"],
];

describe("the recorder's address policy (allowance off)", () => {
  it("covers every address class and every IPv6 form that carries an IPv4 address", async () => {
    // Each reason the policy gives must be exercised by some URL of the table.
    const reasons = await Promise.all(
      HOSTILE.map(([url]) =>
        pinTarget(url, OFF).then(
          () => "",
          (e: RecordingFetchError) => e.message,
        ),
      ),
    );
    const covered = (needle: string) => reasons.some((why) => why.includes(needle));
    const classes = [
      "loopback",
      "private",
      "linkLocal",
      "carrierGradeNat",
      "multicast",
      "broadcast",
      "unspecified",
      "uniqueLocal",
    ];
    const forms = [
      "IPv4-mapped",
      "IPv4-translated",
      "IPv4-compatible",
      "(NAT64)",
      "local NAT64",
      "6to4",
      "Teredo server",
      "Teredo client",
      "ISATAP",
    ];
    expect([...classes, ...forms].filter((needle) => !covered(needle))).toEqual([]);
    for (const form of forms) {
      expect(reasons.some((why) => why.includes(form) && why.includes("169.254.169.254"))).toBe(true);
      expect(reasons.some((why) => why.includes(form) && why.includes("127.0.0.1"))).toBe(true);
    }
  });

  it.each(HOSTILE)("refuses %s (%s), permanently", async (url, reason) => {
    const error = await pinTarget(url, OFF).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RecordingFetchError);
    expect((error as RecordingFetchError).reason).toBe(reason);
    expect((error as RecordingFetchError).retryable).toBe(false);
  });

  it("allows a public https host and pins its address", async () => {
    const target = await pinTarget("https://recordings.example.com/r.mp4?sig=1", OFF);
    expect(target).toMatchObject({ address: "93.184.216.34", family: 4 });
  });

  it("resolves once: a resolver that answers public then loopback (rebinding) is never asked again", async () => {
    let calls = 0;
    const rebinding: Resolver = async () => [
      calls++ === 0 ? { address: "93.184.216.34", family: 4 } : { address: "127.0.0.1", family: 4 },
    ];
    const target = await pinTarget("https://rebind.attacker.example/r.mp4", { ...OFF, resolver: rebinding });
    const lookup = pinnedLookup(target) as unknown as (
      host: string,
      options: { all?: boolean },
      cb: (err: unknown, address: unknown, family?: number) => void,
    ) => void;
    const answers: unknown[] = [];
    for (const all of [false, true, false])
      lookup("rebind.attacker.example", { all }, (_e, address) => answers.push(address));
    expect(calls).toBe(1);
    expect(answers).toEqual(["93.184.216.34", [{ address: "93.184.216.34", family: 4 }], "93.184.216.34"]);
  });

  it("with the local allowance, exempts only the named hosts", async () => {
    const local = { allowHttp: true, allowedHosts: ["127.0.0.1"], resolver };
    await expect(pinTarget("http://127.0.0.1:9/r.mp4", local)).resolves.toMatchObject({
      address: "127.0.0.1",
    });
    await expect(pinTarget("http://loopback.attacker.example/r.mp4", local)).rejects.toMatchObject({
      reason: "refused-address",
    });
  });

  it("classifies public unicast as allowed", () => {
    expect(classifyAddress("8.8.8.8")).toEqual({ allowed: true });
    expect(classifyAddress("2606:4700::1111")).toEqual({ allowed: true });
    expect(classifyAddress("[::ffff:8.8.8.8]")).toEqual({ allowed: true });
  });
});

describe("the hosts an app's API key may be sent to (apiKeyHosts)", () => {
  const hosts = ["cometchat.io", "recordings.example.com"];

  it("are the listed hosts and their subdomains, over https", () => {
    expect(mayCarryApiKey("https://cometchat.io/r.mp4", hosts)).toBe(true);
    expect(mayCarryApiKey("https://app1.api-us.cometchat.io/v3/r.mp4?sig=1", hosts)).toBe(true);
    expect(mayCarryApiKey("https://RECORDINGS.example.com./r.mp4", hosts)).toBe(true);
  });

  it("are no other host, however it is spelt", () => {
    for (const url of [
      "https://attacker.example/r.mp4",
      "https://cometchat.io.attacker.example/r.mp4",
      "https://evilcometchat.io/r.mp4",
      "https://cometchat.io@attacker.example/r.mp4",
      "https://example.com/r.mp4",
      "not a url",
    ])
      expect(mayCarryApiKey(url, hosts), url).toBe(false);
    expect(mayCarryApiKey("https://cometchat.io/r.mp4", [])).toBe(false);
  });
});
