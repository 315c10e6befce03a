-- Step 2 of the day's query: the facts, the first copies whose event time is in the day, with
-- what the figures need read from the body once (the actor, the call's other party, the group,
-- the message, the stint, the roster, the membership change and its order key…). This paragraph
-- is for a reader of the file: `queries.ts` leaves it out of the text the engines run.

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
