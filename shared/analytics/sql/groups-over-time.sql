-- Groups over time for one app by SQL over the membership history (the same text on DuckDB and
-- Athena; `npx webhook sql`): for each closed day from :from to :to, the memberships at its start
-- and end (each member's last change before, or up to, the day says in or out; a group deleted
-- after that change empties it), the members at its start who were out at some time in it, and
-- the groups with members at its end. The same figures as `groupsOverTime` (TypeScript, what
-- `query activity --groups` reads), which the tests compare with this, day by day. A change's
-- `changed_at` (and a deletion's `deleted`) is the order key of facts: comparable across days.
WITH closed AS (
  SELECT DISTINCT "date" AS set_day FROM day_users WHERE "date" BETWEEN :from AND :to
),
changes AS (
  SELECT "date" AS set_day, group_id, uid, member, removed, changed_at
  FROM membership_changes
  WHERE app = :app AND deleted IS NULL
),
deletions AS (
  SELECT "date" AS set_day, group_id, deleted FROM membership_changes WHERE app = :app AND deleted IS NOT NULL
),
-- Each membership's last change before each closed day (edge 0: its start) and up to it (1: its end).
latest AS (
  SELECT
    c.set_day,
    e.edge,
    m.group_id,
    m.uid,
    m.member,
    m.changed_at,
    row_number() OVER (PARTITION BY c.set_day, e.edge, m.group_id, m.uid ORDER BY m.changed_at DESC) AS k
  FROM closed AS c
  CROSS JOIN UNNEST(sequence(0, 1)) AS e (edge)
  JOIN changes AS m ON m.set_day < c.set_day OR (e.edge = 1 AND m.set_day = c.set_day)
),
-- The last deletion of each group before (up to) each closed day.
deleted AS (
  SELECT c.set_day, e.edge, d.group_id, max(d.deleted) AS deleted
  FROM closed AS c
  CROSS JOIN UNNEST(sequence(0, 1)) AS e (edge)
  JOIN deletions AS d ON d.set_day < c.set_day OR (e.edge = 1 AND d.set_day = c.set_day)
  GROUP BY c.set_day, e.edge, d.group_id
),
members AS (
  SELECT l.set_day, l.edge, l.group_id, l.uid
  FROM latest AS l
  LEFT JOIN deleted AS d ON d.set_day = l.set_day AND d.edge = l.edge AND d.group_id = l.group_id
  WHERE l.k = 1 AND l.member AND (d.deleted IS NULL OR d.deleted < l.changed_at)
),
figures AS (
  SELECT
    c.set_day,
    count(DISTINCT CASE WHEN m.edge = 0 THEN m.group_id || '|' || m.uid END) AS members_at_start,
    count(DISTINCT CASE WHEN m.edge = 1 THEN m.group_id || '|' || m.uid END) AS members_at_end,
    count(DISTINCT CASE WHEN m.edge = 1 THEN m.group_id END) AS groups_with_members,
    count(DISTINCT CASE WHEN m.edge = 0 AND ch.removed THEN m.group_id || '|' || m.uid END) AS churned
  FROM closed AS c
  LEFT JOIN members AS m ON m.set_day = c.set_day
  LEFT JOIN changes AS ch
    ON m.edge = 0 AND ch.set_day = c.set_day AND ch.group_id = m.group_id AND ch.uid = m.uid
  GROUP BY c.set_day
)
SELECT set_day AS day, members_at_start, members_at_end, churned, groups_with_members
FROM figures
ORDER BY set_day
