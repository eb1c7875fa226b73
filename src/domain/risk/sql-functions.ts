// The SQL functions a read-only statement may call: an allow-list, because the functions that act are many and
// spread across three servers and their extensions (writefile, load_extension, edit, lo_export, lo_import,
// pg_terminate_backend, pg_cancel_backend, pg_reload_conf, set_config, nextval, setval, dblink_exec, query_to_xml,
// pg_read_file, LOAD_FILE, SLEEP, ClickHouse's file() and executable() …), and a new one is not read-only until someone
// has looked at it. Names are compared in lower case.

const NAMES = `
  count sum avg min max array_agg string_agg json_agg jsonb_agg json_object_agg jsonb_object_agg bool_and bool_or every
  bit_and bit_or stddev stddev_pop stddev_samp variance var_pop var_samp percentile_cont percentile_disc mode
  group_concat total listagg any_value
  row_number rank dense_rank percent_rank cume_dist ntile lag lead first_value last_value nth_value
  coalesce nullif greatest least ifnull iif if isnull nvl
  length char_length character_length octet_length bit_length lower upper initcap trim ltrim rtrim btrim lpad rpad substr
  substring left right replace reverse repeat position strpos instr concat concat_ws format split_part regexp_replace
  regexp_matches regexp_match regexp_split_to_table regexp_split_to_array regexp_like regexp_substr regexp_count
  translate ascii chr char md5 sha1 sha2 encode decode to_hex hex unhex quote_ident quote_literal quote_nullable
  starts_with locate mid lcase ucase space field find_in_set printf unicode glob like soundex to_base64 from_base64
  abs ceil ceiling floor round trunc mod power pow sqrt cbrt exp ln log log10 log2 sign pi degrees radians sin cos tan
  asin acos atan atan2 random rand width_bucket div
  now current_date current_time current_timestamp localtime localtimestamp date_trunc date_part extract age to_char
  to_date to_timestamp to_number make_date make_time make_timestamp make_timestamptz make_interval justify_days
  justify_hours justify_interval clock_timestamp statement_timestamp transaction_timestamp timeofday date time datetime
  julianday strftime unixepoch date_format date_add date_sub datediff timestampdiff timestampadd from_unixtime
  unix_timestamp year month day hour minute second dayofweek dayofyear week weekday last_day curdate curtime sysdate
  utc_timestamp convert_tz str_to_date isfinite timezone
  cast convert try_cast to_regclass to_regtype to_regproc format_type pg_typeof typeof
  json_build_object jsonb_build_object json_build_array jsonb_build_array json_extract json_extract_path
  json_extract_path_text jsonb_extract_path jsonb_extract_path_text json_array_elements jsonb_array_elements
  json_array_elements_text jsonb_array_elements_text json_each jsonb_each json_each_text jsonb_each_text
  json_object_keys jsonb_object_keys json_typeof jsonb_typeof jsonb_pretty json_array_length jsonb_array_length to_json
  to_jsonb row_to_json array_to_json jsonb_path_query jsonb_path_exists jsonb_strip_nulls json_strip_nulls json jsonb
  json_object json_array json_valid json_type json_group_array json_group_object json_unquote json_keys json_contains
  json_length json_quote json_tree jsonb_set jsonb_insert json_set json_insert json_replace json_remove json_patch
  array_length array_lower array_upper array_position array_positions array_append array_prepend array_cat
  array_to_string string_to_array unnest cardinality array_dims generate_series generate_subscripts
  gen_random_uuid uuid
  version current_user session_user current_schema current_schemas current_database current_catalog user database schema
  inet_server_addr inet_server_port inet_client_addr inet_client_port pg_backend_pid pg_postmaster_start_time
  pg_conf_load_time pg_is_in_recovery pg_last_wal_receive_lsn pg_last_wal_replay_lsn pg_last_xact_replay_timestamp
  pg_current_wal_lsn pg_current_wal_insert_lsn pg_wal_lsn_diff pg_walfile_name pg_size_pretty pg_size_bytes
  pg_database_size pg_relation_size pg_total_relation_size pg_table_size pg_indexes_size pg_tablespace_size
  pg_column_size pg_get_viewdef pg_get_indexdef pg_get_constraintdef pg_get_functiondef pg_get_triggerdef
  pg_get_ruledef pg_get_expr pg_get_userbyid pg_get_serial_sequence pg_get_keywords pg_table_is_visible
  pg_type_is_visible pg_function_is_visible has_table_privilege has_schema_privilege has_database_privilege
  has_column_privilege has_function_privilege has_sequence_privilege pg_has_role obj_description col_description
  shobj_description pg_blocking_pids pg_encoding_to_char pg_client_encoding currval lastval pg_tablespace_location
  sqlite_version sqlite_source_id changes total_changes last_insert_rowid randomblob zeroblob likely unlikely likelihood
  quote connection_id found_rows row_count last_insert_id
  todate todatetime tostartofhour tostartofday tostartofminute tostartofmonth formatreadablesize uniq uniqexact countif
  sumif avgif any anylast argmax argmin grouparray topk quantile quantiles
  numeric decimal varchar character timestamp interval bit float
`;

const READ_FUNCTIONS: ReadonlySet<string> = new Set(NAMES.split(/\s+/).filter((n) => n !== ''));

/** PostgreSQL's statistics getters (pg_stat_get_*) only read. */
export const isReadFunction = (name: string): boolean => READ_FUNCTIONS.has(name.toLowerCase()) || /^pg_stat_get_/i.test(name);

/** Words a `(` may follow that are grammar, not a function call. */
export const NOT_CALLS: ReadonlySet<string> = new Set(
  `IN EXISTS ANY ALL SOME VALUES AS OVER FILTER WITHIN USING ON AND OR NOT WHERE SELECT FROM JOIN LATERAL ROW ARRAY WHEN
  THEN ELSE BY HAVING LIMIT OFFSET UNION INTERSECT EXCEPT DISTINCT IS LIKE ILIKE BETWEEN RECURSIVE GROUPING SETS CUBE
  ROLLUP PARTITION TABLESAMPLE WINDOW ORDER OF ESCAPE OPERATOR CASE EXPLAIN MATERIALIZED`.split(/\s+/).filter((w) => w !== ''),
);

/** Schemas whose functions are the server's own. */
export const SYSTEM_SCHEMAS: ReadonlySet<string> = new Set(['PG_CATALOG', 'INFORMATION_SCHEMA', 'MAIN']);
