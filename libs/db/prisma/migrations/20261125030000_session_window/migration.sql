-- Session memory in one statement: the newest p_tail turns and, only when those fill the tail
-- (the session is longer than the window), the oldest p_head turns. earlier_turns needed one
-- call for each part, so a task in a long session paid one more round trip and transaction than
-- a task in a short one (docs/performance.md "Session memory"). Same plan rules as the lists
-- (20261124160000_list_plans): index order whatever the statistics say. PL/pgSQL, not SQL: its
-- query plan is cached by the backend, where a SQL function's body is planned on every call
-- (0.3 ms per task, measured).
CREATE FUNCTION session_window(p_session uuid, p_created timestamptz, p_id uuid, p_tail integer, p_head integer)
RETURNS TABLE (id uuid, query text, result text, recent boolean) LANGUAGE plpgsql STABLE
SET enable_sort = off SET enable_bitmapscan = off SET enable_seqscan = off
AS $$
#variable_conflict use_column
BEGIN
  RETURN QUERY
  WITH tail AS MATERIALIZED (
    SELECT t.id, t.query, t.result FROM tasks t
    WHERE t.session_id = p_session AND t.status = 'COMPLETED' AND t.result IS NOT NULL AND t.result <> ''
      AND (t.created_at, t.id) < (p_created, p_id)
    ORDER BY t.created_at DESC, t.id DESC LIMIT p_tail
  )
  SELECT tail.id, tail.query, tail.result, true FROM tail
  UNION ALL
  SELECT head.id, head.query, head.result, false FROM (
    SELECT t.id, t.query, t.result FROM tasks t
    WHERE t.session_id = p_session AND t.status = 'COMPLETED' AND t.result IS NOT NULL AND t.result <> ''
      AND (t.created_at, t.id) < (p_created, p_id)
    ORDER BY t.created_at, t.id LIMIT p_head
  ) head
  WHERE (SELECT count(*) FROM tail) = p_tail;
END
$$;

DROP FUNCTION earlier_turns(uuid, timestamptz, uuid, boolean, integer);
