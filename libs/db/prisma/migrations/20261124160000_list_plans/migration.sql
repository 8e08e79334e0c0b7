-- The lists and session memory read pages in index order: each query below is answered by a
-- backward (or forward) scan of one ordering index that stops after the page. PostgreSQL picks
-- that plan only while its statistics are fresh: for a user or session it has not analyzed
-- yet (rows written since the last ANALYZE, autovacuum behind or off), it estimates one row
-- and may read every row of the user through another index and sort them — 100,000 rows for
-- one page, measured. These functions plan their query with sorts, bitmap and sequential scans
-- disabled, so the index-order plan is the only one left whatever the statistics say
-- (docs/performance.md "Plans that do not depend on statistics").

-- A user's tasks, newest first; p_status NULL = any status.
CREATE FUNCTION tasks_page(p_user uuid, p_status varchar, p_limit integer, p_offset integer)
RETURNS SETOF tasks LANGUAGE sql STABLE
SET enable_sort = off SET enable_bitmapscan = off SET enable_seqscan = off
AS $$
  SELECT * FROM tasks
  WHERE user_id = p_user AND (p_status IS NULL OR status = p_status)
  ORDER BY created_at DESC, id DESC LIMIT p_limit OFFSET p_offset
$$;

-- A session's tasks, newest first (its owner is checked before); p_status NULL = any status.
CREATE FUNCTION session_tasks_newest(p_session uuid, p_status varchar, p_limit integer, p_offset integer)
RETURNS SETOF tasks LANGUAGE sql STABLE
SET enable_sort = off SET enable_bitmapscan = off SET enable_seqscan = off
AS $$
  SELECT * FROM tasks
  WHERE session_id = p_session AND (p_status IS NULL OR status = p_status)
  ORDER BY created_at DESC, id DESC LIMIT p_limit OFFSET p_offset
$$;

-- A session's tasks, oldest first (turns, history); p_limit NULL = all.
CREATE FUNCTION session_tasks_oldest(p_session uuid, p_limit integer, p_offset integer)
RETURNS SETOF tasks LANGUAGE sql STABLE
SET enable_sort = off SET enable_bitmapscan = off SET enable_seqscan = off
AS $$
  SELECT * FROM tasks WHERE session_id = p_session
  ORDER BY created_at, id LIMIT p_limit OFFSET p_offset
$$;

-- A user's sessions that are not deleted, most recent activity first.
CREATE FUNCTION sessions_page(p_user uuid, p_limit integer, p_offset integer)
RETURNS SETOF sessions LANGUAGE sql STABLE
SET enable_sort = off SET enable_bitmapscan = off SET enable_seqscan = off
AS $$
  SELECT * FROM sessions WHERE user_id = p_user AND deleted_at IS NULL
  ORDER BY last_activity_at DESC, id DESC LIMIT p_limit OFFSET p_offset
$$;

-- Session memory: the completed turns of a session before a task (p_created, p_id), newest or
-- oldest first.
CREATE FUNCTION earlier_turns(p_session uuid, p_created timestamptz, p_id uuid, p_newest_first boolean, p_limit integer)
RETURNS TABLE (id uuid, query text, result text) LANGUAGE sql STABLE
SET enable_sort = off SET enable_bitmapscan = off SET enable_seqscan = off
AS $$
  (SELECT t.id, t.query, t.result FROM tasks t
   WHERE p_newest_first AND t.session_id = p_session AND t.status = 'COMPLETED' AND t.result IS NOT NULL AND t.result <> ''
     AND (t.created_at, t.id) < (p_created, p_id)
   ORDER BY t.created_at DESC, t.id DESC LIMIT p_limit)
  UNION ALL
  (SELECT t.id, t.query, t.result FROM tasks t
   WHERE NOT p_newest_first AND t.session_id = p_session AND t.status = 'COMPLETED' AND t.result IS NOT NULL AND t.result <> ''
     AND (t.created_at, t.id) < (p_created, p_id)
   ORDER BY t.created_at, t.id LIMIT p_limit)
$$;
