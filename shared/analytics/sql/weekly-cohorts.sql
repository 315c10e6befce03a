-- The weekly retention cohorts of one app by SQL over the day sets (the same text on DuckDB and
-- Athena; `npx webhook sql`): for each week (Monday first, UTC) with a closed day from :from to
-- :to, the users first seen in it (but for imported users who existed before the day they were
-- first seen: `imported_users`, #43), and how many of them were active in each of the 4 weeks after
-- (`week_after` 1 to 4; null while that week is not over in the sets). The same as
-- `usersOverTime`'s weeks (TypeScript, `query activity --retention`), which the tests compare.
WITH last_closed AS (
  SELECT max("date") AS last_day FROM day_users
),
weeks AS (
  SELECT DISTINCT CAST(date_trunc('week', CAST("date" AS DATE)) AS DATE) AS week
  FROM day_users
  WHERE "date" BETWEEN :from AND :to
),
imported AS (
  SELECT uid, min(coalesce(createdat, importedat)) AS exists_at
  FROM imported_users
  WHERE app = :app
  GROUP BY uid
),
cohort AS (
  SELECT DISTINCT w.week, f.uid
  FROM weeks AS w
  JOIN first_seen_users AS f
    ON f.app = :app
    AND CAST(f."date" AS DATE) BETWEEN w.week AND CAST(w.week + INTERVAL '6' DAY AS DATE)
  LEFT JOIN imported AS i ON i.uid = f.uid
  WHERE i.exists_at IS NULL OR floor(i.exists_at / 86400) >= date_diff('day', DATE '1970-01-01', CAST(f."date" AS DATE))
),
after AS (
  SELECT w.week, k.week_after, CAST(w.week + INTERVAL '7' DAY * k.week_after AS DATE) AS starts
  FROM weeks AS w
  CROSS JOIN UNNEST(sequence(1, 4)) AS k (week_after)
),
active AS (
  SELECT
    a.week,
    a.week_after,
    a.starts,
    count(DISTINCT CASE WHEN u.uid IS NOT NULL THEN c.uid END) AS active
  FROM after AS a
  LEFT JOIN cohort AS c ON c.week = a.week
  LEFT JOIN day_users AS u
    ON u.app = :app
    AND u.uid = c.uid
    AND CAST(u."date" AS DATE) BETWEEN a.starts AND CAST(a.starts + INTERVAL '6' DAY AS DATE)
  GROUP BY a.week, a.week_after, a.starts
)
SELECT
  CAST(a.week AS VARCHAR) AS week,
  (SELECT count(*) FROM cohort AS c WHERE c.week = a.week) AS users,
  a.week_after,
  CASE
    WHEN CAST(a.starts + INTERVAL '6' DAY AS DATE) > CAST(l.last_day AS DATE) THEN NULL
    ELSE a.active
  END AS active
FROM active AS a
CROSS JOIN last_closed AS l
ORDER BY a.week, a.week_after
