import { createHash } from "node:crypto";
import { fixtureText, type Loose } from "../fixtures";
import type { AppId } from "./world";

/*
 * The writers model's people and what they do (issue #50): five users, among them a uid that
 * prefixes another's (`john`, `john_doe`) and two people who share a display name (`sam` and
 * `sam_b`, both "Sam Lee"); the facts a delivery carries, made from the simulator's templates
 * with the cast's uids, names and the run's clock.
 */

export const USERS = {
  john: "John Smith",
  john_doe: "John Doe",
  sam: "Sam Lee",
  sam_b: "Sam Lee",
  carol: "Carol Ray",
} as const;
export type Uid = keyof typeof USERS;
export const UIDS = Object.keys(USERS) as Uid[];

/** The users a drawn `forget` erases (never `sam_b` nor `carol`: they keep their names and figures). */
export const ERASABLE: readonly Uid[] = ["john", "john_doe", "sam"];

/** What a fact is: a trigger of the templates, acted by `actor` towards `peer`. */
export type FactKind = "dm" | "react" | "edit" | "call" | "presence" | "join" | SideFactKind;
export const FACT_KINDS: readonly FactKind[] = ["dm", "react", "edit", "call", "presence", "join"];
/**
 * Facts that reach the bucket's side objects (drawn by their own operation, `operations/side.ts`):
 * a join whose member's avatar is a number (as the platform might send after a change: the
 * projector refuses it, `quarantine/`), a message over the ingest's inline limit (`oversize/`), a
 * call with its recording (the recorder fetches it from the world's file server: `recordings/`).
 */
export type SideFactKind = "refusedJoin" | "bigDm" | "recordedCall";
export const SIDE_FACT_KINDS: readonly SideFactKind[] = ["refusedJoin", "bigDm", "recordedCall"];
/** A big message's text: over the ingest's inline limit (200,000 bytes) with its envelope. */
const BIG_TEXT = "lorem ipsum ".repeat(17_000);

/** One fact drawn by the model: who, to whom, in which app. */
export interface FactSpec {
  kind: FactKind;
  app: AppId;
  actor: Uid;
  peer: Uid;
}

/** A body as the platform sends it, with its trigger and app. */
export interface PlatformBody {
  trigger: string;
  appId: AppId;
  body: string;
  /** The uids the body names (the facts' people). */
  uids: Uid[];
}

/** The template each kind is made from, and the templates' own people and ids it replaces. */
const TEMPLATES: Record<FactKind, string[]> = {
  dm: ["message_sent"],
  react: ["message_reaction_added"],
  edit: ["message_edited"],
  call: ["call_initiated", "call_participant_joined"],
  presence: ["user_connection_status_changed"],
  join: ["group_member_joined"],
  refusedJoin: ["group_member_joined"],
  bigDm: ["message_sent"],
  recordedCall: ["call_initiated", "call_participant_joined", "recording_generated"],
};
const TEMPLATE_SESSION = "v1.eu.2598234fa1e3b9c.1696934199a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8";
const TIME_KEYS = new Set([
  "sentAt",
  "updatedAt",
  "editedAt",
  "reactedAt",
  "initiatedAt",
  "joinedAt",
  "joined_at",
  "connectedAt",
  "timestamp",
  "deliveredAt",
  "readAt",
]);

/** Every time field of a body set to `at` (ms), in the unit the template gives it (s or ms). */
function stamp(value: unknown, at: number): void {
  if (Array.isArray(value)) for (const v of value) stamp(v, at);
  else if (value && typeof value === "object")
    for (const [key, v] of Object.entries(value as Loose)) {
      if (TIME_KEYS.has(key) && typeof v === "number")
        (value as Loose)[key] = v > 1e12 ? at : Math.floor(at / 1000);
      else stamp(v, at);
    }
}

/**
 * The bodies of one fact at `at` (ms): its template(s) with the template's people replaced by the
 * actor (uid 1, Andrew Joseph) and the peer (uids 2 and 5), its ids made from `id` (unique in the
 * run), its times the clock's. A call is two deliveries: its initiation and the peer joining
 * (an occupant line names the peer by name only). `platform`: the address of the recordings it
 * serves, and whether it changed its joins (each then a refused join).
 *
 * @example factBodies({ kind: "dm", app: "app-a", actor: "john", peer: "carol" }, T0, "7f3a")[0].trigger // "message_sent"
 */
export function factBodies(
  spec: FactSpec,
  at: number,
  id: string,
  platform: { recordingsUrl?: string; changedJoins?: boolean } = {},
): PlatformBody[] {
  const { actor, peer, app } = spec;
  return (TEMPLATES[spec.kind] ?? []).map((trigger) => {
    let text = fixtureText(trigger)
      .replaceAll(TEMPLATE_SESSION, `v1.eu.${app}.${id}`)
      .replaceAll("cometchat-guid-1", `guid-${app}`)
      .replaceAll("cometchat-uid-1", actor)
      .replaceAll("cometchat-uid-2", peer)
      .replaceAll("cometchat-uid-5", peer)
      .replaceAll("Andrew Joseph", USERS[actor])
      .replaceAll("George Alan", USERS[peer])
      .replaceAll("John Paul", USERS[peer]);
    // The occupant who joins a call is its peer.
    if (trigger === "call_participant_joined") text = text.replaceAll(USERS[actor], USERS[peer]);
    const body = JSON.parse(text) as Loose;
    body.appId = app;
    stamp(body, at);
    const kind = spec.kind === "join" && platform.changedJoins ? "refusedJoin" : spec.kind;
    sideOf(kind, body, peer, `${platform.recordingsUrl ?? ""}/recordings/${app}-${id}-4096.mp4`);
    const json = JSON.stringify(body).replace(
      /"(id|messageId)":"(\d+)"/g,
      (_m, key, n) => `"${key}":"${id}-${n}"`,
    );
    // The people the body names by uid (a reaction names its reactor alone); an occupant, by name only.
    const uids = trigger === "call_participant_joined" ? [peer] : UIDS.filter((uid) => namesUid(json, uid));
    return { trigger, appId: app, body: json, uids };
  });
}

/** What makes a side fact's body what it is: the refused avatar, the big text, the recording's address. */
function sideOf(kind: FactKind, body: Loose, peer: Uid, recordingUrl: string): void {
  const data = body.data as Loose;
  if (kind === "refusedJoin") ((data.members as Loose)[peer] as Loose).avatar = 404;
  if (kind === "bigDm") ((data.message as Loose).data as Loose).text = BIG_TEXT;
  if (kind === "recordedCall" && body.trigger === "recording_generated") data.recording_url = recordingUrl;
}

/** The event id the ingest gives a body: its SHA-256. */
export const eventIdOf = (body: string) => createHash("sha256").update(body).digest("hex");

/**
 * Whether `text` names `uid` as a whole identifier: the uid between non-identifier characters,
 * or as a side of a conversation id (`<a>_user_<b>`). `john` is not named by `john_doe`.
 *
 * @example namesUid('{"uid":"john_doe"}', "john") // false
 */
export function namesUid(text: string, uid: string): boolean {
  const escaped = uid.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return new RegExp(`(?:(?<![A-Za-z0-9_-])|(?<=_user_))${escaped}(?![A-Za-z0-9-]|_(?!user_))`).test(text);
}
