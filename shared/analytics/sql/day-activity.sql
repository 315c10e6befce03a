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
facts AS (
  SELECT
    app,
    event_id,
    received_at,
    event_time,
    rank,
    trigger,
    CAST(floor((event_time - :day_start) / 3600000.0) AS INTEGER) AS fact_hour,
    CASE
      WHEN trigger IN ('message_sent', 'user_mentioned')
        THEN json_extract_scalar(body, '$.data.message.sender')
      -- An edit or delete in the published layout names its actor in entities.by; live, the
      -- message itself says editedBy or deletedBy, else its sender (messageChangeOf).
      WHEN trigger = 'message_edited'
        THEN coalesce(
          json_extract_scalar(body, '$.data.message.data.entities.by.entity.uid'),
          json_extract_scalar(body, '$.data.message.editedBy'),
          json_extract_scalar(body, '$.data.message.sender')
        )
      WHEN trigger = 'message_deleted'
        THEN coalesce(
          json_extract_scalar(body, '$.data.message.data.entities.by.entity.uid'),
          json_extract_scalar(body, '$.data.message.deletedBy'),
          json_extract_scalar(body, '$.data.message.sender')
        )
      WHEN trigger IN ('message_reaction_added', 'message_reaction_removed')
        THEN json_extract_scalar(body, '$.data.reaction.uid')
      -- A receipt's reader: data.body.user, or in the legacy format data.receiptSender (receiptOf).
      WHEN trigger IN ('message_delivery_receipt', 'message_read_receipt')
        THEN coalesce(
          json_extract_scalar(body, '$.data.body.user.uid'),
          json_extract_scalar(body, '$.data.receiptSender')
        )
      WHEN trigger = 'user_connection_status_changed'
        THEN json_extract_scalar(body, '$.data.user.uid')
      WHEN trigger IN ('call_initiated', 'call_busy', 'call_rejected', 'call_cancelled', 'call_unanswered')
        THEN json_extract_scalar(body, '$.data.call.sender')
      WHEN trigger IN ('group_created', 'group_owner_transferred')
        THEN json_extract_scalar(body, '$.data.group.owner')
      WHEN trigger IN ('group_updated', 'group_deleted')
        THEN json_extract_scalar(body, '$.data.group.updatedBy')
    END AS actor,
    CASE
      WHEN trigger IN ('call_initiated', 'call_busy', 'call_rejected', 'call_cancelled', 'call_unanswered')
        AND json_extract_scalar(body, '$.data.call.receiverType') = 'user'
        THEN json_extract_scalar(body, '$.data.call.receiver')
    END AS party,
    CASE WHEN trigger = 'message_sent' THEN json_extract_scalar(body, '$.data.message.receiverType') END
      AS receiver_type,
    CASE
      WHEN trigger IN ('message_delivery_receipt', 'message_read_receipt')
        AND json_extract_scalar(body, '$.data.receiptType') IS NOT NULL THEN 1
      ELSE 0
    END AS legacy_receipt,
    CASE
      WHEN trigger = 'message_sent' AND json_extract_scalar(body, '$.data.message.receiverType') = 'group'
        THEN json_extract_scalar(body, '$.data.message.receiver')
    END AS group_id,
    CASE WHEN trigger = 'message_sent' THEN json_extract_scalar(body, '$.data.message.sender') END AS sender,
    -- The message a message_sent is, or a receipt is of (current or legacy layout).
    CASE
      WHEN trigger = 'message_sent' THEN json_extract_scalar(body, '$.data.message.id')
      WHEN trigger IN ('message_delivery_receipt', 'message_read_receipt')
        THEN coalesce(
          json_extract_scalar(body, '$.data.body.messageId'),
          json_extract_scalar(body, '$.data.messageId')
        )
    END AS message_id,
    -- Who wrote to or called whom, 1:1 (sender>receiver): a chat followed by a call between them.
    CASE
      WHEN trigger = 'message_sent' AND json_extract_scalar(body, '$.data.message.receiverType') = 'user'
        THEN json_extract_scalar(body, '$.data.message.sender') || '>' || json_extract_scalar(body, '$.data.message.receiver')
      WHEN trigger = 'call_initiated' AND json_extract_scalar(body, '$.data.call.receiverType') = 'user'
        THEN json_extract_scalar(body, '$.data.call.sender') || '>' || json_extract_scalar(body, '$.data.call.receiver')
    END AS directed,
    -- When the actor was created (epoch s; spec 2.3), where the fact carries the actor's own entity.
    CAST(CAST(CASE
      WHEN trigger = 'user_connection_status_changed' THEN json_extract_scalar(body, '$.data.user.createdAt')
      WHEN trigger IN ('message_delivery_receipt', 'message_read_receipt')
        THEN json_extract_scalar(body, '$.data.body.user.createdAt')
      WHEN trigger IN ('message_reaction_added', 'message_reaction_removed')
        THEN json_extract_scalar(body, '$.data.reaction.reactedBy.createdAt')
      WHEN trigger IN ('message_sent', 'user_mentioned')
        AND json_extract_scalar(body, '$.data.message.data.entities.sender.entity.uid')
          = json_extract_scalar(body, '$.data.message.sender')
        THEN json_extract_scalar(body, '$.data.message.data.entities.sender.entity.createdAt')
    END AS DOUBLE) AS BIGINT) AS actor_created_at,
    -- A 1:1 conversation: its two parties, in order, whoever sent.
    CASE
      WHEN trigger = 'message_sent' AND json_extract_scalar(body, '$.data.message.receiverType') = 'user'
        AND json_extract_scalar(body, '$.data.message.sender') IS NOT NULL
        AND json_extract_scalar(body, '$.data.message.receiver') IS NOT NULL
        THEN least(json_extract_scalar(body, '$.data.message.sender'), json_extract_scalar(body, '$.data.message.receiver'))
          || '|'
          || greatest(json_extract_scalar(body, '$.data.message.sender'), json_extract_scalar(body, '$.data.message.receiver'))
    END AS pair,
    CASE
      WHEN trigger = 'message_sent'
        THEN concat(
          coalesce(json_extract_scalar(body, '$.data.message.category'), '?'),
          '/',
          coalesce(json_extract_scalar(body, '$.data.message.type'), '?')
        )
    END AS message_kind,
    CASE WHEN trigger = 'call_initiated' THEN json_extract_scalar(body, '$.data.call.type') END AS call_type,
    CASE WHEN trigger = 'user_connection_status_changed' THEN json_extract_scalar(body, '$.data.status') END
      AS presence_status,
    -- The client a presence fact's connection came from (spec 6.6: web, javascript, ios, android…).
    CASE
      WHEN trigger = 'user_connection_status_changed'
        THEN json_extract_scalar(body, '$.data.currentConnection.platform')
    END AS platform,
    CASE
      WHEN trigger IN (
        'group_member_joined', 'group_member_added', 'group_member_left', 'group_member_kicked', 'group_member_banned'
      )
        THEN json_size(body, '$.data.members')
    END AS members,
    CASE
      WHEN trigger IN ('call_ended', 'meeting_ended')
        THEN CAST(CAST(json_extract_scalar(body, '$.data.destroyed_at') AS DOUBLE) AS BIGINT)
          - CAST(CAST(json_extract_scalar(body, '$.data.created_at') AS DOUBLE) AS BIGINT)
    END AS session_seconds,
    CASE
      WHEN trigger IN (
        'call_participant_left', 'meeting_participant_left', 'call_ended', 'meeting_ended', 'call_started'
      )
        THEN json_extract_scalar(body, '$.data.sessionId')
    END AS session_id,
    -- A call's transitions: 1 started, 0 ended (the calls in progress, as presence's users online).
    CASE WHEN trigger = 'call_started' THEN 1 WHEN trigger = 'call_ended' THEN 0 END AS call_up,
    CASE
      WHEN trigger IN ('call_participant_left', 'meeting_participant_left') THEN json_extract(body, '$.data.occupant')
    END AS occupant,
    CASE WHEN trigger IN ('call_ended', 'meeting_ended') THEN body END AS end_body,
    CASE
      WHEN trigger IN ('call_ended', 'meeting_ended') THEN coalesce(json_size(body, '$.data.all_occupants'), 0)
      ELSE 0
    END AS roster_size,
    CASE WHEN trigger = 'recording_generated' THEN CAST(json_extract_scalar(body, '$.data.duration') AS DOUBLE) END
      AS recording_seconds,
    CASE WHEN trigger = 'message_sent' THEN json_extract_scalar(body, '$.data.message.conversationId') END
      AS conversation_id,
    -- The membership history: what a fact makes of the members it names ('1' in, '0' out; a
    -- group's creator is its first member), 'x' a group deleted; when, as a key in the order of facts.
    CASE
      WHEN trigger IN ('group_created', 'group_member_joined', 'group_member_added', 'group_member_scope_changed')
        THEN '1'
      WHEN trigger IN ('group_member_left', 'group_member_kicked', 'group_member_banned') THEN '0'
      WHEN trigger = 'group_deleted' THEN 'x'
    END AS member_state,
    CASE
      WHEN trigger IN (
        'group_created', 'group_member_joined', 'group_member_added', 'group_member_scope_changed',
        'group_member_left', 'group_member_kicked', 'group_member_banned', 'group_deleted'
      )
        THEN json_extract_scalar(body, '$.data.group.guid')
    END AS member_group,
    CASE
      WHEN :users = 1 AND trigger IN (
        'group_created', 'group_member_joined', 'group_member_added', 'group_member_scope_changed',
        'group_member_left', 'group_member_kicked', 'group_member_banned'
      )
        THEN array_sort(map_keys(CAST(json_extract(body, '$.data.members') AS MAP(VARCHAR, JSON))))
    END AS member_keys,
    CASE
      WHEN :users = 1 AND trigger IN (
        'group_created', 'group_member_joined', 'group_member_added', 'group_member_scope_changed',
        'group_member_left', 'group_member_kicked', 'group_member_banned'
      )
        THEN coalesce(json_size(body, '$.data.members'), 0)
      ELSE 0
    END AS member_count,
    CASE
      WHEN :users = 1 AND trigger LIKE 'group_%'
        THEN lpad(CAST(event_time AS VARCHAR), 15, '0') || CAST(rank AS VARCHAR)
          || lpad(CAST(received_at AS VARCHAR), 15, '0') || event_id
    END AS order_key
  FROM copies
  WHERE copy = 1 AND event_time >= :day_start AND event_time < :day_end
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
grouped AS (
SELECT
  app,
  GROUPING(hour, group_id, sender, message_kind, set_key, platform) AS grouping_set,
  hour,
  group_id,
  sender,
  message_kind,
  set_key,
  platform,
  sum(CASE WHEN n = 1 AND trigger = 'message_sent' THEN 1 ELSE 0 END) AS messages,
  sum(CASE WHEN n = 1 AND trigger = 'message_sent' AND receiver_type = 'user' THEN 1 ELSE 0 END) AS messages_user,
  sum(CASE WHEN n = 1 AND trigger = 'message_sent' AND receiver_type = 'group' THEN 1 ELSE 0 END) AS messages_group,
  sum(CASE WHEN n = 1 AND trigger = 'message_edited' THEN 1 ELSE 0 END) AS edited,
  sum(CASE WHEN n = 1 AND trigger = 'message_deleted' THEN 1 ELSE 0 END) AS deleted,
  sum(CASE WHEN n = 1 AND trigger = 'message_reaction_added' THEN 1 ELSE 0 END) AS reactions_added,
  sum(CASE WHEN n = 1 AND trigger = 'message_reaction_removed' THEN 1 ELSE 0 END) AS reactions_removed,
  sum(CASE WHEN n = 1 AND trigger = 'user_mentioned' THEN 1 ELSE 0 END) AS mentions,
  sum(CASE WHEN n = 1 AND trigger = 'message_delivery_receipt' THEN 1 ELSE 0 END) AS delivery_receipts,
  sum(CASE WHEN n = 1 AND trigger = 'message_read_receipt' THEN 1 ELSE 0 END) AS read_receipts,
  sum(CASE WHEN n = 1 THEN legacy_receipt ELSE 0 END) AS legacy_receipts,
  sum(CASE WHEN n = 1 AND trigger = 'message_delivered_to_all' THEN 1 ELSE 0 END) AS delivered_to_all,
  sum(CASE WHEN n = 1 AND trigger = 'message_read_by_all' THEN 1 ELSE 0 END) AS read_by_all,
  sum(CASE WHEN n = 1 AND trigger = 'moderation_engine_blocked' THEN 1 ELSE 0 END) AS messages_blocked,
  count(DISTINCT sender) AS active_senders,
  count(DISTINCT uid) AS active_users,
  count(DISTINCT CASE WHEN presence_status = 'online' THEN actor END) AS users_online,
  max(level) AS peak_online,
  max(start_level) AS online_at_start,
  sum(CASE WHEN n = 1 AND trigger = 'user_connection_status_changed' THEN delta ELSE 0 END) AS online_change,
  sum(CASE WHEN n = 1 AND trigger = 'group_created' THEN 1 ELSE 0 END) AS groups_created,
  sum(CASE WHEN n = 1 AND trigger = 'group_deleted' THEN 1 ELSE 0 END) AS groups_deleted,
  sum(CASE WHEN n = 1 AND trigger IN ('group_member_joined', 'group_member_added') THEN members ELSE 0 END)
    AS member_joins,
  sum(CASE WHEN n = 1 AND trigger = 'group_member_left' THEN members ELSE 0 END) AS member_leaves,
  sum(CASE WHEN n = 1 AND trigger = 'group_member_kicked' THEN members ELSE 0 END) AS member_kicks,
  sum(CASE WHEN n = 1 AND trigger = 'group_member_banned' THEN members ELSE 0 END) AS member_bans,
  count(DISTINCT group_id) AS active_groups,
  sum(CASE WHEN n = 1 AND trigger = 'call_initiated' AND call_type = 'audio' THEN 1 ELSE 0 END) AS calls_audio,
  sum(CASE WHEN n = 1 AND trigger = 'call_initiated' AND call_type = 'video' THEN 1 ELSE 0 END) AS calls_video,
  sum(CASE WHEN n = 1 AND trigger = 'call_started' THEN 1 ELSE 0 END) AS calls_started,
  sum(CASE WHEN n = 1 AND trigger = 'call_busy' THEN 1 ELSE 0 END) AS calls_busy,
  sum(CASE WHEN n = 1 AND trigger = 'call_rejected' THEN 1 ELSE 0 END) AS calls_rejected,
  sum(CASE WHEN n = 1 AND trigger = 'call_cancelled' THEN 1 ELSE 0 END) AS calls_cancelled,
  sum(CASE WHEN n = 1 AND trigger = 'call_unanswered' THEN 1 ELSE 0 END) AS calls_unanswered,
  sum(CASE WHEN n = 1 AND trigger = 'meeting_started' THEN 1 ELSE 0 END) AS meetings_started,
  sum(CASE WHEN n = 1 AND trigger = 'call_ended' THEN session_seconds ELSE 0 END) AS call_seconds,
  sum(CASE WHEN n = 1 AND trigger = 'meeting_ended' THEN session_seconds ELSE 0 END) AS meeting_seconds,
  sum(CASE WHEN stint_report = 1 AND stint_left_at IS NOT NULL THEN stint_left_at - stint_joined_at ELSE 0 END)
    AS participant_seconds,
  sum(CASE WHEN n = 1 AND trigger IN ('call_participant_joined', 'meeting_participant_joined') THEN 1 ELSE 0 END)
    AS participants_joined,
  sum(CASE WHEN n = 1 AND trigger IN ('call_ended', 'meeting_ended') THEN 1 ELSE 0 END) AS sessions_ended,
  sum(CASE WHEN n = 1 AND trigger = 'call_ended' THEN 1 ELSE 0 END) AS calls_ended,
  sum(CASE WHEN n = 1 AND trigger = 'meeting_ended' THEN 1 ELSE 0 END) AS meetings_ended,
  -- The duration distribution of the sessions that ended (destroyed_at - created_at, seconds).
  sum(CASE WHEN n = 1 AND session_seconds < 60 THEN 1 ELSE 0 END) AS sessions_under_1m,
  sum(CASE WHEN n = 1 AND session_seconds >= 60 AND session_seconds < 300 THEN 1 ELSE 0 END) AS sessions_1_5m,
  sum(CASE WHEN n = 1 AND session_seconds >= 300 AND session_seconds < 900 THEN 1 ELSE 0 END) AS sessions_5_15m,
  sum(CASE WHEN n = 1 AND session_seconds >= 900 AND session_seconds < 3600 THEN 1 ELSE 0 END) AS sessions_15_60m,
  sum(CASE WHEN n = 1 AND session_seconds >= 3600 THEN 1 ELSE 0 END) AS sessions_over_60m,
  -- Participants of the sessions that ended: the distinct names of each one's roster (all_occupants).
  count(DISTINCT CASE WHEN n >= 3 AND trigger = 'call_ended' THEN session_id || '|' || stint_name END)
    AS call_participants,
  count(DISTINCT CASE WHEN n >= 3 AND trigger = 'meeting_ended' THEN session_id || '|' || stint_name END)
    AS meeting_participants,
  sum(CASE WHEN n = 1 AND trigger = 'recording_generated' THEN 1 ELSE 0 END) AS recordings,
  sum(CASE WHEN n = 1 THEN recording_seconds ELSE 0 END) AS recording_seconds,
  sum(CASE WHEN n = 1 AND trigger = 'transcription_generated' THEN 1 ELSE 0 END) AS transcripts,
  -- An active user's row: when their entity says they were created (the earliest the day gives).
  min(CASE WHEN n = 1 THEN actor_created_at END) AS created_at,
  -- A member's (a deleted group's) row: the group and member, their last change of the day (its
  -- order key, then the state), and whether they were out at any time in the day ('0').
  max(CASE WHEN n = 0 OR member IS NOT NULL THEN member_group END) AS set_group,
  max(member) AS set_member,
  max(CASE WHEN n = 0 OR member IS NOT NULL THEN order_key || member_state END) AS last_change,
  max(CASE WHEN member IS NOT NULL AND member_state = '0' THEN 1 ELSE 0 END) AS removed,
  max(call_level) AS peak_calls,
  max(call_start_level) AS calls_at_start,
  sum(CASE WHEN n = 1 THEN call_delta ELSE 0 END) AS calls_change,
  count(DISTINCT CASE WHEN n = 1 AND trigger = 'call_initiated' AND first_chat_at < event_time THEN actor END)
    AS chat_to_call,
  count(response_ms) AS first_responses,
  count(delivery_ms) AS delivery_latencies,
  count(read_ms) AS read_latencies,
  -- Exact nearest-rank percentiles (ms) of the day's (the hour's) values.
  CASE
    WHEN GROUPING(hour) = 0 THEN min(CASE WHEN latency_hour_rank * 100 >= 50 * latencies_hour_n THEN response_ms END)
    ELSE min(CASE WHEN latency_rank * 100 >= 50 * latencies_n THEN response_ms END)
  END AS first_response_p50_ms,
  CASE
    WHEN GROUPING(hour) = 0 THEN min(CASE WHEN latency_hour_rank * 100 >= 90 * latencies_hour_n THEN response_ms END)
    ELSE min(CASE WHEN latency_rank * 100 >= 90 * latencies_n THEN response_ms END)
  END AS first_response_p90_ms,
  CASE
    WHEN GROUPING(hour) = 0 THEN min(CASE WHEN latency_hour_rank * 100 >= 50 * latencies_hour_n THEN delivery_ms END)
    ELSE min(CASE WHEN latency_rank * 100 >= 50 * latencies_n THEN delivery_ms END)
  END AS delivery_latency_p50_ms,
  CASE
    WHEN GROUPING(hour) = 0 THEN min(CASE WHEN latency_hour_rank * 100 >= 90 * latencies_hour_n THEN delivery_ms END)
    ELSE min(CASE WHEN latency_rank * 100 >= 90 * latencies_n THEN delivery_ms END)
  END AS delivery_latency_p90_ms,
  CASE
    WHEN GROUPING(hour) = 0 THEN min(CASE WHEN latency_hour_rank * 100 >= 99 * latencies_hour_n THEN delivery_ms END)
    ELSE min(CASE WHEN latency_rank * 100 >= 99 * latencies_n THEN delivery_ms END)
  END AS delivery_latency_p99_ms,
  CASE
    WHEN GROUPING(hour) = 0 THEN min(CASE WHEN latency_hour_rank * 100 >= 50 * latencies_hour_n THEN read_ms END)
    ELSE min(CASE WHEN latency_rank * 100 >= 50 * latencies_n THEN read_ms END)
  END AS read_latency_p50_ms,
  CASE
    WHEN GROUPING(hour) = 0 THEN min(CASE WHEN latency_hour_rank * 100 >= 90 * latencies_hour_n THEN read_ms END)
    ELSE min(CASE WHEN latency_rank * 100 >= 90 * latencies_n THEN read_ms END)
  END AS read_latency_p90_ms,
  CASE
    WHEN GROUPING(hour) = 0 THEN min(CASE WHEN latency_hour_rank * 100 >= 99 * latencies_hour_n THEN read_ms END)
    ELSE min(CASE WHEN latency_rank * 100 >= 99 * latencies_n THEN read_ms END)
  END AS read_latency_p99_ms
FROM ranked_latencies
GROUP BY GROUPING SETS (
  (app), (app, hour), (app, group_id), (app, sender), (app, message_kind), (app, set_key), (app, platform)
)
),
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
