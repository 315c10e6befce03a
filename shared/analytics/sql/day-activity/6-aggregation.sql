-- Step 6 of the day's query: one aggregation over grouping sets, each per app (the day, each
-- hour, each group, each sender, each message kind, each day-set key, each client platform), every
-- figure a column. This paragraph is for a reader of the file: `queries.ts` leaves it out of the
-- text the engines run.

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
