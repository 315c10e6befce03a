-- Users over time for one app by SQL over the day sets (the same text on DuckDB and Athena;
-- `npx webhook sql`): for each closed day from :from to :to, DAU; WAU and MAU, the distinct users
-- of the 7 and 30 days ending that day; the users first seen that day (but for imported users who
-- existed before it) and how many were active again 1, 7 and 30 days later (0 until that day is
-- closed); the users created that day: whose entity says so (`createdat`, epoch s), among those
-- active within 30 days of the range, and every user imported as created then (`imported_users`:
-- `createdat`, else when the platform confirmed them; #43); the conversations started. The same
-- figures as `usersOverTime` (TypeScript, what `query activity --users` reads), which the tests
-- compare with this, day by day.
WITH closed AS (
  SELECT DISTINCT "date" AS set_day FROM day_users WHERE "date" BETWEEN :from AND :to
),
active AS (
  SELECT DISTINCT "date" AS set_day, uid FROM day_users WHERE app = :app
),
windows AS (
  SELECT
    c.set_day,
    count(DISTINCT CASE WHEN a.set_day = c.set_day THEN a.uid END) AS dau,
    count(DISTINCT CASE WHEN CAST(a.set_day AS DATE) > CAST(c.set_day AS DATE) - INTERVAL '7' DAY THEN a.uid END)
      AS wau,
    count(DISTINCT a.uid) AS mau
  FROM closed AS c
  LEFT JOIN active AS a
    ON CAST(a.set_day AS DATE) <= CAST(c.set_day AS DATE)
    AND CAST(a.set_day AS DATE) > CAST(c.set_day AS DATE) - INTERVAL '30' DAY
  GROUP BY c.set_day
),
imported AS (
  SELECT uid, min(coalesce(createdat, importedat)) AS exists_at
  FROM imported_users
  WHERE app = :app
  GROUP BY uid
),
cohorts AS (
  SELECT
    f."date" AS set_day,
    count(DISTINCT f.uid) AS new_users,
    count(DISTINCT CASE WHEN CAST(a.set_day AS DATE) = CAST(f."date" AS DATE) + INTERVAL '1' DAY THEN f.uid END)
      AS retained_d1,
    count(DISTINCT CASE WHEN CAST(a.set_day AS DATE) = CAST(f."date" AS DATE) + INTERVAL '7' DAY THEN f.uid END)
      AS retained_d7,
    count(DISTINCT CASE WHEN CAST(a.set_day AS DATE) = CAST(f."date" AS DATE) + INTERVAL '30' DAY THEN f.uid END)
      AS retained_d30
  FROM first_seen_users AS f
  LEFT JOIN imported AS i ON i.uid = f.uid
  LEFT JOIN active AS a ON a.uid = f.uid
  WHERE f.app = :app
    AND (i.exists_at IS NULL OR floor(i.exists_at / 86400) >= date_diff('day', DATE '1970-01-01', CAST(f."date" AS DATE)))
  GROUP BY f."date"
),
created AS (
  SELECT uid, min(created_at) AS created_at
  FROM (
    SELECT uid, createdat AS created_at
    FROM day_users
    WHERE app = :app AND createdat IS NOT NULL
      AND CAST("date" AS DATE) BETWEEN CAST(:from AS DATE) - INTERVAL '29' DAY AND CAST(:to AS DATE) + INTERVAL '30' DAY
    UNION ALL
    SELECT uid, exists_at AS created_at FROM imported
  ) AS said
  GROUP BY uid
),
created_on AS (
  SELECT floor(created_at / 86400) AS epoch_day, count(*) AS created_users FROM created GROUP BY floor(created_at / 86400)
),
started AS (
  SELECT "date" AS set_day, count(*) AS conversations_started
  FROM conversations_started
  WHERE app = :app
  GROUP BY "date"
)
SELECT
  w.set_day AS day,
  w.dau,
  w.wau,
  w.mau,
  coalesce(c.new_users, 0) AS new_users,
  coalesce(c.retained_d1, 0) AS retained_d1,
  coalesce(c.retained_d7, 0) AS retained_d7,
  coalesce(c.retained_d30, 0) AS retained_d30,
  coalesce(n.created_users, 0) AS created_users,
  coalesce(s.conversations_started, 0) AS conversations_started
FROM windows AS w
LEFT JOIN cohorts AS c ON c.set_day = w.set_day
LEFT JOIN created_on AS n ON n.epoch_day = date_diff('day', DATE '1970-01-01', CAST(w.set_day AS DATE))
LEFT JOIN started AS s ON s.set_day = w.set_day
ORDER BY w.set_day
