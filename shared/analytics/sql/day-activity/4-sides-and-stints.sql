-- Steps 4 and 5 of the day's query: the sides (each fact joined with 1, 2 for a call's two
-- parties, 3, 4, … for an end's roster or a membership fact's members, 0 for a day set's
-- conversation or deleted group) and the stints (each occupant's stint that left in the day,
-- once, in the hour it left). This paragraph is for a reader of the file: `queries.ts` leaves it
-- out of the text the engines run.

sides AS (
  SELECT
    l.*,
    s.n,
    CASE WHEN s.n = 1 THEN actor WHEN s.n = 2 THEN party END AS uid,
    CASE
      WHEN s.n = 1 THEN occupant
      WHEN s.n >= 3 THEN json_extract(end_body, concat('$.data.all_occupants[', CAST(s.n - 3 AS VARCHAR), ']'))
    END AS stint,
    CASE WHEN s.n >= 3 AND member_keys IS NOT NULL THEN member_keys[s.n - 2] END AS member
  FROM levels AS l
  CROSS JOIN UNNEST(sequence(
    CASE WHEN :users = 1 AND trigger IN ('message_sent', 'group_deleted') THEN 0 ELSE 1 END,
    2 + roster_size + member_count
  )) AS s (n)
),
reported AS (
  SELECT
    d.*,
    json_extract_scalar(stint, '$.name') AS stint_name,
    CAST(CAST(json_extract_scalar(stint, '$.joined_at') AS DOUBLE) AS BIGINT) AS stint_joined_at,
    CAST(CAST(json_extract_scalar(stint, '$.left_at') AS DOUBLE) AS BIGINT) AS reported_left_at
  FROM sides AS d
),
reports AS (
  SELECT
    d.*,
    CASE
      WHEN stint_name IS NOT NULL AND stint_joined_at IS NOT NULL
        AND reported_left_at * 1000 >= :day_start AND reported_left_at * 1000 < :day_end
        THEN reported_left_at
    END AS stint_left_at
  FROM reported AS d
),
stints AS (
  SELECT
    r.*,
    CASE
      WHEN n >= 3 AND stint_left_at IS NOT NULL
        THEN CAST(floor((stint_left_at * 1000 - :day_start) / 3600000.0) AS INTEGER)
      ELSE fact_hour
    END AS hour,
    row_number() OVER (
      PARTITION BY app, session_id, stint_name, stint_joined_at ORDER BY stint_left_at DESC NULLS LAST
    ) AS stint_report
  FROM reports AS r
),
