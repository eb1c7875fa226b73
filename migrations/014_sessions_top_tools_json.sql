-- sessions.top_tools as json, not jsonb: a list page writes each session's JSON in the database, and a jsonb
-- value is printed anew for every row (~1 ms a 1 000-row page, a twelfth of it, measured side by side on a
-- copy), where json text is passed on as stored. Nothing compares or indexes top_tools; the projection writes
-- it whole (jsonb_populate_recordset fills a json column as readily), so the rows do not change meaning and
-- no rebuild is needed. A rebuild under way when this runs swaps in a jsonb column again: still correct.
ALTER TABLE sessions
  ALTER COLUMN top_tools DROP DEFAULT,
  ALTER COLUMN top_tools TYPE json USING top_tools::json,
  ALTER COLUMN top_tools SET DEFAULT '[]';
