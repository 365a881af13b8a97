SELECT to_char(greatest(lumen_visibility_horizon(), (SELECT c.read_horizon FROM city_read_walk w
    CROSS JOIN LATERAL (SELECT c.read_horizon FROM city_read_checkpoint c WHERE c.walk_id = w.id AND c.page < $1 ORDER BY c.page DESC LIMIT 1) c
    WHERE w.external_system_id = $2 AND w.resource = $3 AND w.updated_since = $4::timestamptz AND w.page_size = $5 AND NOT pg_is_in_recovery())) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS h,
       t.matching_below AS t_matching, to_char("t"."horizon" AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS t_h, t.below AS t_below,
       cp.page AS c_page, cp.u AS c_u, cp.id AS c_id, cp.rank AS c_rank, cp.h AS c_h, cp.below AS c_below,
       r.rank AS r_rank, r.u AS r_u, r.id AS r_id, r.h AS r_h, r.below AS r_below
  FROM (SELECT 1) one
  LEFT JOIN city_read_total t ON false
  LEFT JOIN LATERAL (
          SELECT c.page, to_char("c"."last_updated_at" AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS u, c.last_id AS id, c.rank, to_char("c"."rank_horizon" AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS h, c.rank_below AS below
            FROM city_read_walk w
           CROSS JOIN LATERAL (
             SELECT c.page, c.last_updated_at, c.last_id, c.rank, c.rank_horizon, c.rank_below FROM city_read_checkpoint c
              WHERE c.walk_id = w.id AND c.page < $6
              ORDER BY c.page DESC LIMIT 1) c
           WHERE w.external_system_id = $7 AND w.resource = $8 AND w.updated_since = $9::timestamptz AND w.page_size = $10) cp ON true
  LEFT JOIN LATERAL (
          SELECT b.rank, to_char("b"."last_updated_at" AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS u, b.last_id AS id, to_char("b"."rank_horizon" AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS h, b.rank_below AS below
            FROM city_read_walk w
           CROSS JOIN LATERAL (
             SELECT c.rank, c.last_updated_at, c.last_id, c.rank_horizon, c.rank_below FROM city_read_checkpoint c
              WHERE c.walk_id = w.id AND c.rank <= $11 AND c.last_id IS NOT NULL
              ORDER BY c.rank DESC LIMIT 1) b
           WHERE w.tenant_id = $12 AND w.resource = $13 AND w.updated_since = $14::timestamptz
             AND cp.page IS DISTINCT FROM $15
           ORDER BY b.rank DESC, b.rank_horizon DESC LIMIT 1) r ON true
-- parameters: [7,"E","pole","-infinity",1000,7,"E","pole","-infinity",1000,6000,"T","pole","-infinity",6]
