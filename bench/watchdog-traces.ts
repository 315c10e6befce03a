/**
 * The judge's traces (#58): a fleet of apps over 40 weeks, each shape drawn from what chat
 * products send, with labelled faults. FIXED before the rule was tuned (shapes, parameters,
 * seeds): change them and the figures of `bench:watchdog` are no longer comparable. Deliveries
 * are counted per minute, as the ledger counts them per hour: facts, or for a presence-only app
 * its distinct users of the hour (each counted at the minute of its first presence in the hour).
 */
import { KNOWN_TRIGGERS } from "@webhook-backend/stream/events/schemas";

export const MINUTE_MS = 60_000;
export const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;
/** A Monday; 40 weeks cover both clock changes of Europe (29 Mar, 25 Oct) and the US (8 Mar, 1 Nov). */
export const TRACE_START = Date.UTC(2026, 1, 2);
export const TRACE_WEEKS = 40;
export const TRACE_MINUTES = TRACE_WEEKS * 7 * 1440;
export const SEED = 58;
/** Apps that exist before the trace are judged (and faulted) from this day of it: the ledger before it is not simulated. */
export const WARM_UP_DAYS = 28;
export const APPS_PER_SHAPE = Number(process.env.WATCHDOG_APPS_PER_SHAPE ?? 35);

export type ShapeName =
  | "steady"
  | "diurnal-utc"
  | "diurnal-berlin"
  | "diurnal-new-york"
  | "diurnal-kolkata"
  | "weekdays"
  | "top-of-hour"
  | "presence-only"
  | "new-app"
  | "decline"
  | "launch-spike";

export const SHAPES: readonly ShapeName[] = [
  "steady",
  "diurnal-utc",
  "diurnal-berlin",
  "diurnal-new-york",
  "diurnal-kolkata",
  "weekdays",
  "top-of-hour",
  "presence-only",
  "new-app",
  "decline",
  "launch-spike",
];

/** A labelled fault. */
export type Fault =
  | { kind: "stop"; label: "30 min" | "2 h" | "1 day"; start: number; end: number }
  | { kind: "narrowed"; start: number; end: number }
  | { kind: "refused"; start: number; end: number };

export interface AppTrace {
  appId: string;
  shape: ShapeName;
  /** Deliveries per minute of the trace as the app would send them (the rhythm, no fault). */
  rhythm: Float32Array;
  /** What the ledger counts, faults applied (a stop: nothing; narrowed: presence only, a tenth; refused: nothing archived). */
  counted: Float32Array;
  /** The model's mean deliveries in each hour of the trace (no noise): "what the app usually sends in that hour". */
  usualPerHour: Float32Array;
  /** Minute of its first delivery. */
  firstMinute: number;
  faults: Fault[];
  /** Its username (known to the deployment). */
  username: string;
}

/** Seeded PRNG (mulberry32): the same traces on every run. */
export function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function normal(rng: () => number): number {
  return Math.sqrt(-2 * Math.log(1 - rng())) * Math.cos(2 * Math.PI * rng());
}

/** A Poisson draw (Knuth below 30, normal above). */
export function poisson(rng: () => number, mean: number): number {
  if (mean <= 0) return 0;
  if (mean > 30) return Math.max(0, Math.round(mean + Math.sqrt(mean) * normal(rng)));
  const limit = Math.exp(-mean);
  let k = 0;
  let p = rng();
  while (p > limit) {
    k++;
    p *= rng();
  }
  return k;
}

const HOURS = TRACE_WEEKS * 7 * 24;

/** Local hour and weekday (0 Sunday) of each hour of the trace in a time zone. */
function localClock(zone: string): { hour: Uint8Array; weekday: Uint8Array } {
  const format = new Intl.DateTimeFormat("en-US", {
    timeZone: zone,
    hour: "numeric",
    hourCycle: "h23",
    weekday: "short",
  });
  const days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
  const hour = new Uint8Array(HOURS);
  const weekday = new Uint8Array(HOURS);
  for (let h = 0; h < HOURS; h++) {
    const parts = format.formatToParts(new Date(TRACE_START + h * HOUR_MS));
    hour[h] = Number(parts.find((p) => p.type === "hour")?.value ?? 0);
    weekday[h] = days.indexOf(parts.find((p) => p.type === "weekday")?.value ?? "Sun");
  }
  return { hour, weekday };
}

const ZONES: Record<string, string> = {
  "diurnal-berlin": "Europe/Berlin",
  "diurnal-new-york": "America/New_York",
  "diurnal-kolkata": "Asia/Kolkata",
  weekdays: "America/New_York",
  "top-of-hour": "Europe/Berlin",
};
const clocks = new Map<string, ReturnType<typeof localClock>>();
function clockOf(zone: string) {
  let clock = clocks.get(zone);
  if (!clock) {
    clock = localClock(zone);
    clocks.set(zone, clock);
  }
  return clock;
}

/** A chat day: near nothing at night, a rise from 07:00, a peak mid-afternoon, a fall to midnight. */
function dayCurve(localHour: number): number {
  const bell = localHour >= 7 ? Math.sin((Math.PI * (localHour - 7 + 0.5)) / 17) : 0;
  return 0.03 + 0.97 * Math.max(0, bell) ** 1.5;
}

/** The model's rate (deliveries an hour, no noise) of a shape in trace hour `h`. */
function shapeRate(
  shape: ShapeName,
  h: number,
  p: { peak: number; weekend: number; startHour: number; tau: number; spikeHour: number; spike: number },
): number {
  const zone = ZONES[shape] ?? "UTC";
  const clock = clockOf(zone);
  const hour = clock.hour[h] as number;
  const weekday = clock.weekday[h] as number;
  const weekendDay = weekday === 0 || weekday === 6;
  const week = weekendDay ? p.weekend : 1;
  switch (shape) {
    case "steady":
      return p.peak * week;
    case "weekdays":
      return weekendDay || hour < 8 || hour >= 18
        ? 0
        : p.peak * (0.6 + 0.4 * Math.sin((Math.PI * (hour - 8 + 0.5)) / 10));
    case "top-of-hour":
      return hour >= 8 && hour < 21 ? p.peak : 0;
    case "new-app": {
      if (h < p.startHour) return 0;
      const ramp = Math.min(1, 0.2 + (0.8 * (h - p.startHour)) / (10 * 24));
      return p.peak * ramp * week * dayCurve(hour);
    }
    case "decline":
      return p.peak * Math.exp(-h / p.tau) * week * dayCurve(hour);
    case "launch-spike": {
      const since = h - p.spikeHour;
      const spike = since < 0 ? 0 : since < 48 ? p.spike : p.spike * Math.exp(-(since - 48) / 24);
      return p.peak * (1 + spike) * week * dayCurve(hour);
    }
    default:
      return p.peak * week * dayCurve(hour);
  }
}

const PRESENCE = [...KNOWN_TRIGGERS].filter((t) => /online|offline|presence/.test(t)).sort();
/** The triggers `connect` subscribes (every one it knows), and those left when narrowed to presence. */
export const ALL_TRIGGERS = [...KNOWN_TRIGGERS].sort();
export const PRESENCE_TRIGGERS = PRESENCE.length ? PRESENCE : ["user_online"];

/**
 * Draws the fleet's app `index` of `shape`: its rhythm, what the ledger counts, its faults.
 * Peaks are log-uniform in 8 to 800 deliveries an hour; a day varies ×e^N(0, 0.15), an hour
 * ×e^N(0, 0.2) around the shape; weekends ×0.6 to 1 (but "weekdays": none).
 */
export function drawApp(shape: ShapeName, index: number): AppTrace {
  const rng = random(SEED * 1_000_003 + SHAPES.indexOf(shape) * 10_007 + index);
  const peak = 8 * 100 ** rng();
  const params = {
    peak,
    weekend: 0.6 + 0.4 * rng(),
    startHour: shape === "new-app" ? Math.floor((7 + rng() * 230) * 24 + rng() * 24) : 0,
    tau: (TRACE_WEEKS * 7 * 24) / (1.2 + 1.2 * rng()),
    spikeHour: Math.floor((20 + rng() * 200) * 24),
    spike: 3 + 5 * rng(),
  };
  const rhythm = new Float32Array(TRACE_MINUTES);
  const usualPerHour = new Float32Array(HOURS);
  let dayNoise = 1;
  let firstMinute = -1;
  for (let h = 0; h < HOURS; h++) {
    if (h % 24 === 0) dayNoise = Math.exp(0.15 * normal(rng));
    const usual = shapeRate(shape, h, params);
    usualPerHour[h] = usual;
    const mean = usual * dayNoise * Math.exp(0.2 * normal(rng) - 0.02);
    const base = h * 60;
    if (shape === "top-of-hour") {
      // A scheduled job or a class: the hour's deliveries within its first 3 minutes.
      const n = poisson(rng, mean);
      for (let i = 0; i < n; i++) {
        const m = base + Math.floor(rng() * 3);
        rhythm[m] = (rhythm[m] ?? 0) + 1;
      }
    } else if (shape === "presence-only") {
      // Distinct users of the hour, each counted at its first presence (users with more events come earlier).
      const n = poisson(rng, mean);
      for (let i = 0; i < n; i++) {
        let first = rng();
        for (let k = poisson(rng, 2); k > 0; k--) first = Math.min(first, rng());
        const m = base + Math.floor(first * 60);
        rhythm[m] = (rhythm[m] ?? 0) + 1;
      }
    } else {
      for (let m = 0; m < 60; m++) rhythm[base + m] = poisson(rng, mean / 60);
    }
  }
  for (let m = 0; m < TRACE_MINUTES; m++)
    if ((rhythm[m] as number) > 0) {
      firstMinute = m;
      break;
    }
  const appId = `${shape}-${String(index).padStart(2, "0")}`;
  const faults = drawFaults(rng, shape, index, firstMinute, usualPerHour);
  const counted = Float32Array.from(rhythm);
  for (const f of faults) {
    const from = Math.floor((f.start - TRACE_START) / MINUTE_MS);
    const to = Math.min(TRACE_MINUTES, Math.floor((f.end - TRACE_START) / MINUTE_MS));
    for (let m = from; m < to; m++) {
      // Narrowed: each delivery kept with probability 0.1 (presence only: volume falls to a tenth).
      let kept = 0;
      if (f.kind === "narrowed") for (let n = rhythm[m] as number; n > 0; n--) kept += rng() < 0.1 ? 1 : 0;
      counted[m] = kept;
    }
  }
  return { appId, shape, rhythm, counted, usualPerHour, firstMinute, faults, username: `webhook-${appId}` };
}

/**
 * Each app: three full stops (30 min, 2 h, 1 day, in a drawn order) at drawn times in the first
 * three quarters of its life (a new app: the first within its first 6 days); in the last quarter,
 * every third app has its triggers narrowed to presence for 3 days (not a presence-only app), and
 * a small app (peak under 60 an hour, steady or diurnal) has its credential refused for 4 hours
 * from a drawn time of its day.
 */
function drawFaults(
  rng: () => number,
  shape: ShapeName,
  index: number,
  firstMinute: number,
  usualPerHour: Float32Array,
): Fault[] {
  const faults: Fault[] = [];
  const from =
    TRACE_START + Math.max(firstMinute + 1440, shape === "new-app" ? 0 : WARM_UP_DAYS * 1440) * MINUTE_MS;
  const span = TRACE_START + TRACE_MINUTES * MINUTE_MS - from;
  const quarter = span / 4;
  const labels: Array<["30 min" | "2 h" | "1 day", number]> = [
    ["30 min", 30 * MINUTE_MS],
    ["2 h", 2 * HOUR_MS],
    ["1 day", DAY_MS],
  ];
  for (let i = labels.length - 1; i > 0; i--) {
    const j = Math.floor(rng() * (i + 1));
    [labels[i], labels[j]] = [labels[j] as (typeof labels)[number], labels[i] as (typeof labels)[number]];
  }
  labels.forEach(([label, length], q) => {
    const start =
      shape === "new-app" && q === 0
        ? from + rng() * 5 * DAY_MS
        : from + q * quarter + rng() * (quarter - length - DAY_MS);
    const minute = Math.floor(start / MINUTE_MS) * MINUTE_MS;
    faults.push({ kind: "stop", label, start: minute, end: minute + length });
  });
  const last = from + 3 * quarter + DAY_MS;
  if (index % 3 === 0 && shape !== "presence-only") {
    const start = Math.floor((last + rng() * (quarter - 5 * DAY_MS)) / MINUTE_MS) * MINUTE_MS;
    faults.push({ kind: "narrowed", start, end: start + 3 * DAY_MS });
  } else if (
    ["steady", "diurnal-utc", "diurnal-berlin", "diurnal-new-york", "diurnal-kolkata"].includes(shape) &&
    Math.max(...usualPerHour) < 60
  ) {
    // At a drawn time in the app's busiest hours (a drawn day, the hour of its peak).
    let busiest = 0;
    for (let h = 0; h < 24 * 7; h++)
      if ((usualPerHour[h] as number) > (usualPerHour[busiest] as number)) busiest = h;
    const day = Math.floor((last - TRACE_START) / DAY_MS + rng() * (quarter / DAY_MS - 2));
    const start = TRACE_START + day * DAY_MS + (busiest % 24) * HOUR_MS + Math.floor(rng() * 60) * MINUTE_MS;
    faults.push({ kind: "refused", start, end: start + 4 * HOUR_MS });
  }
  return faults;
}

/** Scanners: drawn bursts of 401s with usernames no deployment has (about 3 a week, 30 to 300 requests in a few minutes). */
export function drawScanners(): Array<{ at: number; requests: number; username: string }> {
  const rng = random(SEED * 7 + 1);
  const bursts: Array<{ at: number; requests: number; username: string }> = [];
  for (let t = TRACE_START; t < TRACE_START + TRACE_MINUTES * MINUTE_MS; t += (rng() * 4.6 * DAY_MS) / 2) {
    const requests = Math.floor(30 + 270 * rng());
    const username = ["admin", "test", "root", "webhook", "user"][Math.floor(rng() * 5)] as string;
    for (let i = 0; i < requests; i++) bursts.push({ at: t + rng() * 4 * MINUTE_MS, requests: 1, username });
  }
  return bursts;
}
