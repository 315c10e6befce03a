-- Step 7 of the day's query: the top lists cut per app (the :top groups and senders with the
-- most messages) and the day sets shipped on a final pass; the rows in order. This paragraph is
-- for a reader of the file: `queries.ts` leaves it out of the text the engines run.

ranked AS (
  SELECT
    g.*,
    -- 47: a group's row, 55: a sender's, 61: a day-set key's (GROUPING: 1 for each of hour,
    -- group_id, sender, message_kind, set_key, platform left out). The row of no group (no sender) is not a list entry.
    row_number() OVER (
      PARTITION BY app, grouping_set
      ORDER BY coalesce(group_id, sender) IS NULL, messages DESC, coalesce(group_id, sender)
    ) AS position
  FROM grouped AS g
)
SELECT *
FROM ranked
WHERE grouping_set NOT IN (47, 55, 61)
  OR (grouping_set IN (47, 55) AND position <= :top AND coalesce(group_id, sender) IS NOT NULL)
  OR (grouping_set = 61 AND :users = 1 AND set_key IS NOT NULL)
ORDER BY app, grouping_set, position
