-- sessions.targets sorts bytewise like every other list of slugs (it sorted in the database's collation, so two
-- servers with different locales could hold the same targets in different orders). The sessions projection's
-- version moves with this, so its rows are rebuilt in the new order.
ALTER TABLE sessions ALTER COLUMN targets TYPE text[] COLLATE "C";
