import type { LookupAddress } from "node:dns";
import { lookup as dnsLookup } from "node:dns/promises";
import http, { type IncomingMessage } from "node:http";
import https from "node:https";
import type { LookupFunction } from "node:net";
import { errorSummary, RecordingFetchError } from "../platform/errors";
import { classifyAddress, isIpLiteral } from "./address-policy";

/** Resolves a host name to all its addresses (node:dns by default; tests pass a stub). */
export type Resolver = (hostname: string) => Promise<LookupAddress[]>;

export const systemResolver: Resolver = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

export interface SafeFetchOptions {
  /** Local stack and tests only: allow http:// (off by default). */
  allowHttp: boolean;
  /** Local stack and tests only: host names exempt from the address check (still pinned). */
  allowedHosts: readonly string[];
  resolver: Resolver;
  connectTimeoutMs: number;
  idleTimeoutMs: number;
  maxRedirects: number;
  /** Headers for the first hop only (the platform's): never sent to a redirect target. */
  firstHopHeaders?: Record<string, string>;
  /** Aborts everything: the total deadline. */
  signal: AbortSignal;
}

export interface OpenedStream {
  response: IncomingMessage;
  contentType: string;
  contentLength: number | undefined;
}

/** A checked destination: the URL and the one address every connection to it will use. */
export interface PinnedTarget {
  url: URL;
  address: string;
  family: 4 | 6;
}

function refuse(reason: "refused-scheme" | "refused-address" | "invalid-url", message: string): never {
  throw new RecordingFetchError(reason, message, false);
}

/**
 * Checks a URL and resolves its host once. The address returned is the one the connection uses
 * (`pinnedLookup`): a resolver that answers differently the second time (DNS rebinding) is never
 * asked again. A host whose answers include any non-public address is refused.
 */
export async function pinTarget(
  raw: string,
  options: Pick<SafeFetchOptions, "allowHttp" | "allowedHosts" | "resolver">,
): Promise<PinnedTarget> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return refuse("invalid-url", "not a URL");
  }
  if (url.protocol !== "https:" && !(options.allowHttp && url.protocol === "http:"))
    return refuse("refused-scheme", `${url.protocol} is not allowed`);
  if (url.username || url.password) return refuse("invalid-url", "credentials in the URL are not allowed");
  const host = url.hostname;
  const exempt = options.allowedHosts.includes(host.replace(/^\[|\]$/g, ""));
  if (isIpLiteral(host)) {
    const bare = host.replace(/^\[|\]$/g, "");
    const verdict = classifyAddress(bare);
    if (!verdict.allowed && !exempt) return refuse("refused-address", verdict.why);
    return { url, address: bare, family: bare.includes(":") ? 6 : 4 };
  }
  let answers: LookupAddress[];
  try {
    answers = await options.resolver(host);
  } catch (error) {
    throw new RecordingFetchError("dns", `cannot resolve ${host}: ${errorSummary(error).message}`, true, {
      cause: error,
    });
  }
  if (answers.length === 0) throw new RecordingFetchError("dns", `${host} has no address`, true);
  if (!exempt) {
    for (const answer of answers) {
      const verdict = classifyAddress(answer.address);
      if (!verdict.allowed) return refuse("refused-address", `${host} resolves to ${verdict.why}`);
    }
  }
  const first = answers[0] as LookupAddress;
  return { url, address: first.address, family: first.family === 6 ? 6 : 4 };
}

/** A `lookup` for node:net that always answers the checked address, never asking DNS again. */
export function pinnedLookup(target: Pick<PinnedTarget, "address" | "family">): LookupFunction {
  return ((_hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (options?.all) callback(null, [{ address: target.address, family: target.family }]);
    else callback(null, target.address, target.family);
  }) as unknown as LookupFunction;
}

function get(
  target: PinnedTarget,
  headers: Record<string, string>,
  options: SafeFetchOptions,
): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const { url } = target;
    const client = url.protocol === "https:" ? https : http;
    const request = client.request({
      protocol: url.protocol,
      hostname: url.hostname.replace(/^\[|\]$/g, ""),
      port: url.port || undefined,
      path: `${url.pathname}${url.search}`,
      method: "GET",
      headers: { "user-agent": "webhook-backend-recorder", accept: "*/*", ...headers },
      lookup: pinnedLookup(target),
      // Certificates are checked against the URL's host name (SNI too), not the pinned address.
      servername: isIpLiteral(url.hostname) ? undefined : url.hostname,
      agent: false,
      signal: options.signal,
    });
    const connectTimer = setTimeout(
      () =>
        request.destroy(
          new RecordingFetchError("timeout", `no connection within ${options.connectTimeoutMs} ms`, true),
        ),
      options.connectTimeoutMs,
    );
    request.once("socket", (socket) => {
      const connected = () => clearTimeout(connectTimer);
      if (!socket.connecting) connected();
      socket.once(url.protocol === "https:" ? "secureConnect" : "connect", connected);
    });
    let answered: IncomingMessage | undefined;
    request.setTimeout(options.idleTimeoutMs, () => {
      const error = new RecordingFetchError("timeout", `no data for ${options.idleTimeoutMs} ms`, true);
      // Fail the body stream itself, so whoever reads it sees why.
      answered?.destroy(error);
      request.destroy(error);
    });
    request.once("response", (response) => {
      clearTimeout(connectTimer);
      answered = response;
      resolve(response);
    });
    request.once("error", (error) => {
      clearTimeout(connectTimer);
      reject(
        error instanceof RecordingFetchError
          ? error
          : options.signal.aborted
            ? new RecordingFetchError("timeout", "the total deadline passed", true, { cause: error })
            : new RecordingFetchError("network", error.message, true, { cause: error }),
      );
    });
    request.end();
  });
}

function retryableStatus(status: number): boolean {
  return status >= 500 || status === 408 || status === 429;
}

/**
 * GETs a recording safely: https only (unless allowed), every hop's host resolved once, checked
 * and pinned, redirects followed by hand up to `maxRedirects`, the first hop's headers never
 * forwarded. Resolves with the 200 response, still unread.
 */
export async function openSafeStream(raw: string, options: SafeFetchOptions): Promise<OpenedStream> {
  let current = raw;
  for (let hop = 0; hop <= options.maxRedirects; hop++) {
    const target = await pinTarget(current, options);
    const response = await get(target, hop === 0 ? (options.firstHopHeaders ?? {}) : {}, options);
    const status = response.statusCode ?? 0;
    if (status >= 300 && status < 400 && response.headers.location) {
      response.resume();
      current = new URL(response.headers.location, target.url).toString();
      continue;
    }
    if (status !== 200) {
      response.resume();
      throw new RecordingFetchError(
        "http-status",
        `${target.url.host} answered ${status}`,
        retryableStatus(status),
      );
    }
    const length = Number(response.headers["content-length"]);
    return {
      response,
      contentType:
        (response.headers["content-type"] ?? "application/octet-stream").split(";")[0]?.trim() ?? "",
      contentLength: Number.isFinite(length) ? length : undefined,
    };
  }
  throw new RecordingFetchError("too-many-redirects", `more than ${options.maxRedirects} redirects`, false);
}
