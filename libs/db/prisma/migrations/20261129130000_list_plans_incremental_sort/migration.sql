-- The page functions (20261124160000_list_plans, 20261125030000_session_window) disabled sorts,
-- but an incremental sort is governed by its own setting and stayed possible: an index on the
-- time alone (sessions_last_activity_at_idx, kept for the retention) plus an incremental sort on
-- the id. An incremental sort gathers at least 32 rows before it returns the first, so for a
-- user with fewer rows than that it reads the whole index: 200,050 tuples and 20–30 ms for one
-- GET /sessions of a user with 20 sessions, beside a user with 100,000, whenever ANALYZE's
-- sample saw only a few users (docs/performance.md "Plans that do not depend on statistics").
ALTER FUNCTION tasks_page(uuid, varchar, integer, integer) SET enable_incremental_sort = off;
ALTER FUNCTION session_tasks_newest(uuid, varchar, integer, integer) SET enable_incremental_sort = off;
ALTER FUNCTION session_tasks_oldest(uuid, integer, integer) SET enable_incremental_sort = off;
ALTER FUNCTION sessions_page(uuid, integer, integer) SET enable_incremental_sort = off;
ALTER FUNCTION session_window(uuid, timestamptz, uuid, integer, integer) SET enable_incremental_sort = off;
