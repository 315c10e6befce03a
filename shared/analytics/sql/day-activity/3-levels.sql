-- Step 3 of the day's query: the facts in their order (event time, lifecycle rank, first
-- receipt, event id): presence and call transitions, each with the users online (calls in
-- progress) after it, the message before a 1:1 message, and the message a receipt is of. This
-- paragraph is for a reader of the file: `queries.ts` leaves it out of the text the engines run.

),
transitions AS (
  SELECT
    f.*,
    CASE WHEN presence_status = 'online' THEN 1 ELSE 0 END AS online,
    lag(presence_status) OVER (
      PARTITION BY app, trigger, actor ORDER BY event_time, rank, received_at, event_id
    ) AS previous_status,
    lag(call_up) OVER (
      PARTITION BY app, CASE WHEN call_up IS NOT NULL THEN session_id END
      ORDER BY event_time, rank, received_at, event_id
    ) AS previous_call_up,
    -- The message before it in its 1:1 conversation (in the order of facts): who sent it, when.
    lag(sender) OVER (PARTITION BY app, pair ORDER BY event_time, rank, received_at, event_id) AS previous_sender,
    lag(event_time) OVER (PARTITION BY app, pair ORDER BY event_time, rank, received_at, event_id)
      AS previous_sent_at,
    -- The message a receipt is of, if it was sent in the day: when, and by whom.
    max(CASE WHEN trigger = 'message_sent' THEN event_time END) OVER (PARTITION BY app, message_id)
      AS message_sent_at,
    max(CASE WHEN trigger = 'message_sent' THEN sender END) OVER (PARTITION BY app, message_id) AS message_sender,
    -- The first 1:1 message of the day from this caller to this callee.
    min(CASE WHEN trigger = 'message_sent' THEN event_time END) OVER (PARTITION BY app, directed) AS first_chat_at
  FROM facts AS f
),
changes AS (
  SELECT
    t.*,
    -- A user whose first transition of the day is "offline" was online when the day began.
    CASE
      WHEN trigger <> 'user_connection_status_changed' THEN NULL
      WHEN previous_status IS NULL AND online = 0 THEN 1
      ELSE 0
    END AS online_at_start,
    CASE
      WHEN trigger <> 'user_connection_status_changed' THEN NULL
      WHEN previous_status IS NULL THEN online - (1 - online)
      WHEN previous_status = 'online' THEN online - 1
      ELSE online
    END AS delta,
    -- A call whose first transition of the day is its end was in progress when the day began.
    CASE WHEN call_up IS NULL THEN NULL WHEN previous_call_up IS NULL AND call_up = 0 THEN 1 ELSE 0 END
      AS call_at_start,
    CASE
      WHEN call_up IS NULL THEN NULL
      WHEN previous_call_up IS NULL THEN call_up - (1 - call_up)
      ELSE call_up - previous_call_up
    END AS call_delta
  FROM transitions AS t
),
levels AS (
  SELECT
    c.*,
    sum(online_at_start) OVER (PARTITION BY app, trigger) AS start_level,
    sum(online_at_start) OVER (PARTITION BY app, trigger)
      + sum(delta) OVER (
        PARTITION BY app, trigger ORDER BY event_time, rank, received_at, event_id
        ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
      ) AS level,
    sum(call_at_start) OVER (PARTITION BY app) AS call_start_level,
    sum(call_at_start) OVER (PARTITION BY app)
      + sum(call_delta) OVER (
        PARTITION BY app, call_up IS NULL ORDER BY event_time, rank, received_at, event_id
        ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
      ) AS call_level
  FROM changes AS c
),
