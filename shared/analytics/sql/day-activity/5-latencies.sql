-- Between steps 5 and 6 of the day's query: the latencies (a first response, a delivery, a
-- read) and their ranks in the day and the hour, for the nearest-rank percentiles; and each row's
-- day-set key on a final pass. This paragraph is for a reader of the file: `queries.ts` leaves it
-- out of the text the engines run.

latencies AS (
  SELECT
    s.*,
    -- A first response: a 1:1 message after one of the other party's (ms between them).
    CASE
      WHEN n = 1 AND pair IS NOT NULL AND previous_sender IS NOT NULL AND previous_sender <> sender
        THEN event_time - previous_sent_at
    END AS response_ms,
    -- A recipient's delivery or read of a message sent in the day (ms after it; not the sender's own).
    CASE
      WHEN n = 1 AND trigger = 'message_delivery_receipt' AND message_sent_at IS NOT NULL
        AND actor <> message_sender THEN event_time - message_sent_at
    END AS delivery_ms,
    CASE
      WHEN n = 1 AND trigger = 'message_read_receipt' AND message_sent_at IS NOT NULL
        AND actor <> message_sender THEN event_time - message_sent_at
    END AS read_ms
  FROM stints AS s
),
ranked_latencies AS (
  -- Each value's rank among the app's values of the day and of its hour (ascending), and how many
  -- there are: the p-th percentile is the value at the first rank r with 100 r >= p n (nearest rank).
  SELECT
    l.*,
    -- The day-set key on a final pass (:users = 1), else null, so that every other pass groups
    -- each app's rows into one (app, set_key) group: no per-key work it would not ship.
    CASE
      WHEN :users = 1 AND n IN (1, 2) AND uid IS NOT NULL THEN 'u|' || uid
      WHEN :users = 1 AND n = 0 AND conversation_id IS NOT NULL THEN 'c|' || conversation_id
      WHEN :users = 1 AND n = 0 AND member_state = 'x' AND member_group IS NOT NULL THEN 'g|' || member_group
      WHEN :users = 1 AND member IS NOT NULL AND member_group IS NOT NULL
        THEN 'm|' || member_group || '|' || member
    END AS set_key,
    -- One rank for the three kinds: each is the value of one trigger (a reply: message_sent; a
    -- delivery, a read: their receipts), so a partition by trigger keeps them apart.
    row_number() OVER (PARTITION BY app, trigger, latency_ms IS NULL ORDER BY latency_ms) AS latency_rank,
    count(latency_ms) OVER (PARTITION BY app, trigger) AS latencies_n,
    row_number() OVER (PARTITION BY app, hour, trigger, latency_ms IS NULL ORDER BY latency_ms) AS latency_hour_rank,
    count(latency_ms) OVER (PARTITION BY app, hour, trigger) AS latencies_hour_n
  -- A fact's latency, whichever kind it is (at most one: they are values of different triggers).
  FROM (SELECT l.*, coalesce(response_ms, delivery_ms, read_ms) AS latency_ms FROM latencies AS l) AS l
),
