-- Step 1 of the day's query (`day-activity`: the fragments of this folder, joined in the order
-- of their names, are one statement): the query's description, then the lines it reads (the
-- receipt days' raw archive and the day's edge, narrowed to :app) and their copies, numbered per
-- natural key by first receipt. This paragraph is for a reader of the file: `queries.ts` leaves
-- it out of the text the engines run.

-- The activity of every app on one UTC day, in one scan of the archive (the same text on DuckDB
-- and Athena; `dialect.ts` binds the :parameters and gives DuckDB Athena's JSON functions).
-- :app narrows it to one app ('' for every app); each step below works per app (every window is
-- partitioned by it, every grouping set holds it), so an app's figures are the same either way.
--
-- 1. lines: the raw archive of the receipt day (with `rollup --neighbours`, for archives written
--    before edge objects: the day before, the day, the day after), and the day's edge: copies of
--    the lines received on other days that the day needs (late events; receipt-timed lines
--    received just before midnight, the first copies of retries received after it).
--    copies: those lines numbered per natural key by first receipt: copy 1 is the fact, any other
--    copy a platform retry, an SQS redelivery, a redrive, a line archived twice or an edge copy.
-- 2. facts: the first copies whose event time is in the day, with what the figures need read
--    from the body once (the actor, the 1:1 call's other party, the group of a group message, a
--    participant-left fact's stint, an end's roster…).
-- 3. levels: presence transitions in the order of facts (event time, lifecycle rank, first
--    receipt, event id), each with the number of users online after it.
-- 4. sides: each fact joined with 1, 2 so that a call's two parties both count as active users
--    (every other figure counts side 1 only), and an end with 3, 4, … for each entry of its roster;
--    on a final pass (:users = 1) also a membership fact with 3, 4, … for each member it names, and
--    a message or a group's deletion with 0 (the day sets: its conversation, the deleted group).
-- 5. stints: each occupant's stint (session, name, join time, as the sessions table keys it)
--    that left in the day, reported by a participant-left fact (side 1) or an end's roster, once:
--    its latest left_at in the day, in that hour (participant-seconds).
-- 6. one aggregation over grouping sets, each per app: the day, each hour, each group, each
--    sender, each message kind, each day-set key and each client platform (GROUPING(...) tells which).
-- 7. the top lists cut here, per app: the :top groups and senders with the most messages (ties
--    by id), so that a day of 10,000 apps ships their top lists, not every group and sender; the
--    day sets only when :users = 1 (a final pass): a row per set key (`set_key`), `u|<uid>` an
--    active user, `c|<conversation>` a conversation with a message, `m|<group>|<uid>` a member's
--    last change of the day (`last_change`: order key and state), `g|<group>` a group deleted.
-- One chain of CTEs, each read once: Athena inlines a CTE at each use, so a second reader of the
-- archive's lines would scan them again.
-- An integer read from a body is cast through DOUBLE: a time written `1696934553.0` reads as
-- 1696934553 on both engines (Trino refuses CAST('1696934553.0' AS BIGINT); DuckDB accepts it).
WITH archived AS (
  SELECT coalesce(app, '_none') AS app, event_id, received_at, event_time, rank, trigger, natural_key, body
  FROM archive_events
  WHERE "date" BETWEEN :first_date AND :last_date
  UNION ALL
  SELECT coalesce(app, '_none') AS app, event_id, received_at, event_time, rank, trigger, natural_key, body
  FROM archive_edges
  WHERE "date" = :day
),
lines AS (
  SELECT * FROM archived WHERE :app = '' OR app = :app
),
copies AS (
  SELECT
    app,
    event_id,
    received_at,
    event_time,
    rank,
    trigger,
    body,
    row_number() OVER (PARTITION BY app, natural_key ORDER BY received_at, event_id) AS copy
  FROM lines
  WHERE natural_key IS NOT NULL
),
