/**
 * The activity figures a generated history implies, computed here in TypeScript, fact by fact,
 * independently of the SQL that the rollup runs (`shared/analytics/sql/day-activity/`): the
 * simulator's check and the tests compare the two. A fact is an event by its natural key
 * (`dedupeKey`), counted once, at the event time of its first receipt.
 *
 * This file is the oracle's public face, what the simulator's checks and the tests import; each
 * family of figures lives in a file of its own: the facts and their payload (`facts.ts`), the
 * counts (`counts.ts`), the levels of users online and calls in progress (`levels.ts`), the
 * sessions (`sessions.ts`), the latencies (`latencies.ts`), chat-to-call (`chat-to-call.ts`), a
 * day's activity put together (`day.ts`), the users (`users.ts`), the day sets (`day-sets.ts`) and
 * the groups over time (`groups-over-time.ts`).
 */
export { expectedActivity } from "./day";
export { expectedDaySets } from "./day-sets";
export { expectedGroupsOverTime } from "./groups-over-time";
export { expectedCreatedAt, expectedUsers } from "./users";
