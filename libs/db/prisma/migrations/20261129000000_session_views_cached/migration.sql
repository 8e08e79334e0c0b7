-- Whether a session's views may be in the session service's cache (docs/decisions.md "Sessions",
-- Cache). The session service sets it before it caches anything of the session; the statements
-- that change a session under its row lock (a submit into an existing session, the final write)
-- return it, and their writers send the cache hint only when it is set, so a session nobody read
-- through the sessions API costs no hint (docs/performance.md "Hints only for watched sessions").
-- Rows that exist before this migration read true: a release that did not mark them may have
-- cached their views. Sessions created from now on start false. Neither statement rewrites the
-- table (a constant default is kept once in the catalog).
ALTER TABLE "sessions" ADD COLUMN "views_cached" BOOLEAN NOT NULL DEFAULT true;
ALTER TABLE "sessions" ALTER COLUMN "views_cached" SET DEFAULT false;
