import type { WebhookCredential } from "../contracts/secrets";
import { CredentialRotationError } from "../platform/errors";

/*
 * Whether the ingest accepts a credential, as a rotation asks it (#50, defect 6): a request that
 * authenticates and stores nothing, and an answer read strictly. Only a 401 says "refused"; a 5xx,
 * a throttle or a network fault says nothing about the credential (the ingest may be down, or
 * behind a gateway that failed), so it is probed again, and a rotation that cannot tell says so
 * and fails rather than calling an old credential refused while the ingest still accepts it.
 * The probe itself (an HTTP request to the ingest) is the command's: `tools/ops/ingest-probe.ts`.
 */

/**
 * What the ingest answered a probe with a credential: `accepted` (it authenticated it), `refused`
 * (401: only that), or unclear (a 5xx, a throttle, a network fault, anything else: it cannot tell
 * whether the credential is accepted, so the probe is made again), with what it got.
 */
export type ProbeAnswer = "accepted" | "refused" | { unclear: string };

/**
 * An HTTP answer to the probe as a `ProbeAnswer`: 401 refused; 400 (an empty body, refused as a
 * bad request once authenticated) or any 2xx accepted; anything else unclear.
 *
 * @example probeAnswer(503) // { unclear: "503" }
 */
export function probeAnswer(status: number): ProbeAnswer {
  if (status === 401) return "refused";
  if (status === 400 || (status >= 200 && status < 300)) return "accepted";
  return { unclear: String(status) };
}

/** How an answer reads in a message: `503`, `no answer (ECONNREFUSED)`, `accepted`, `refused (401)`. */
export function answerText(answer: ProbeAnswer): string {
  return typeof answer === "object" ? answer.unclear : answer === "refused" ? "refused (401)" : answer;
}

/** How a rotation probes: with what, how often, for how long, how it waits, on which clock. */
export interface Probing {
  probe: (credential: WebhookCredential) => Promise<ProbeAnswer>;
  everyMs: number;
  withinMs: number;
  sleep: (ms: number) => Promise<void>;
  now: () => number;
}

/**
 * Probes the ingest with a new credential until it accepts it: a refusal (401) or an unclear
 * answer (5xx, throttled, unreachable) is probed again, for `withinMs`; then a
 * `CredentialRotationError` that says what the ingest answered (both credentials stay valid).
 */
export async function probeUntilAccepted(probing: Probing, credential: WebhookCredential): Promise<void> {
  const deadline = probing.now() + probing.withinMs;
  for (;;) {
    const answer = await probing.probe(credential);
    if (answer === "accepted") return;
    if (probing.now() >= deadline)
      throw new CredentialRotationError(
        typeof answer === "object"
          ? `cannot tell whether the ingest accepts ${credential.username}: it answered ${answer.unclear} for ${probing.withinMs / 1000} s: both credentials stay valid; check the ingest, then run again`
          : `the ingest does not accept ${credential.username} after ${probing.withinMs / 1000} s: both credentials stay valid; run again`,
      );
    await probing.sleep(probing.everyMs);
  }
}

/**
 * Probes the ingest with an old credential until it refuses it (a 401, and only that): the time
 * it did; else, after `withinMs`, whether it was still accepted, or the unclear answer it kept
 * giving (a 5xx or a network fault is never taken for a refusal).
 */
export async function probeUntilRefused(
  probing: Probing,
  credential: WebhookCredential,
): Promise<{ refusedAt: number } | { accepted: true } | { accepted: false; unclear: string }> {
  const deadline = probing.now() + probing.withinMs;
  let accepted = false;
  for (;;) {
    const answer = await probing.probe(credential);
    if (answer === "refused") return { refusedAt: probing.now() };
    accepted ||= answer === "accepted";
    if (probing.now() >= deadline)
      return accepted ? { accepted: true } : { accepted: false, unclear: answerText(answer) };
    await probing.sleep(probing.everyMs);
  }
}
