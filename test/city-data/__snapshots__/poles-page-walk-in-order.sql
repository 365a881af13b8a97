WITH horizon AS MATERIALIZED (SELECT greatest(lumen_visibility_horizon(), $1::timestamptz, (SELECT c.read_horizon FROM city_read_walk w
    CROSS JOIN LATERAL (SELECT c.read_horizon FROM city_read_checkpoint c WHERE c.walk_id = w.id AND c.page < $2 ORDER BY c.page DESC LIMIT 1) c
    WHERE w.external_system_id = $3 AND w.resource = $4 AND w.updated_since = $5::timestamptz AND w.page_size = $6 AND NOT pg_is_in_recovery())) AS at), start AS MATERIALIZED (SELECT to_char((SELECT at FROM horizon) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS h,
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
              WHERE c.walk_id = w.id AND c.page < $7
              ORDER BY c.page DESC LIMIT 1) c
           WHERE w.external_system_id = $8 AND w.resource = $9 AND w.updated_since = $10::timestamptz AND w.page_size = $11) cp ON true
  LEFT JOIN LATERAL (
          SELECT b.rank, to_char("b"."last_updated_at" AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS u, b.last_id AS id, to_char("b"."rank_horizon" AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS h, b.rank_below AS below
            FROM city_read_walk w
           CROSS JOIN LATERAL (
             SELECT c.rank, c.last_updated_at, c.last_id, c.rank_horizon, c.rank_below FROM city_read_checkpoint c
              WHERE c.walk_id = w.id AND c.rank <= $12 AND c.last_id IS NOT NULL
              ORDER BY c.rank DESC LIMIT 1) b
           WHERE w.tenant_id = $13 AND w.resource = $14 AND w.updated_since = $15::timestamptz
             AND cp.page IS DISTINCT FROM $16
           ORDER BY b.rank DESC, b.rank_horizon DESC LIMIT 1) r ON true), page AS MATERIALIZED (SELECT row_number() OVER (ORDER BY p.updated_at, p.id) AS ord, p.updated_at AS u, p.id, p.list_head || coalesce(t.list_item, 'null') || '}' AS item
      FROM "pole" p LEFT JOIN telegestor t ON t.pole_id = p.id
     WHERE "p"."tenant_id" = $17 AND "p"."updated_at" < (SELECT at FROM horizon) AND ("p"."updated_at", "p"."id") > ((SELECT c_u FROM start WHERE c_page = $18)::timestamptz, (SELECT c_id FROM start WHERE c_page = $19))
     ORDER BY p.updated_at, p.id
     LIMIT 1001),
     n AS MATERIALIZED (SELECT (SELECT coalesce(sum(row_count), 0) FROM city_data_count WHERE tenant_id = $20 AND resource = $21)::bigint AS rows, (SELECT count(*) FROM "pole" WHERE tenant_id = $22 AND updated_at >= (SELECT at FROM horizon) AND updated_at <= 'infinity') AS tail_now,
                               NULL::bigint AS tail_rank, NULL::bigint AS tail_cache),
     m AS MATERIALIZED (SELECT NULL::bigint AS mid FROM n)
SELECT p.items,
       (SELECT count(*) FROM page WHERE ord <= $23) AS fetched,
       l.u AS last_u, l.id AS last_id,
       n.rows, n.tail_now, n.tail_rank, n.tail_cache, m.mid, NULL::bigint AS low,
       s.*
  FROM n CROSS JOIN m CROSS JOIN start s
  LEFT JOIN LATERAL (SELECT to_char(u AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS u, id
                       FROM page WHERE ord <= $24 ORDER BY ord DESC LIMIT 1) l ON true
  LEFT JOIN LATERAL (SELECT (ord - 1) / 64 AS piece,
                            CASE WHEN (ord - 1) / 64 > 0 THEN ',' ELSE '' END || string_agg(item, ',' ORDER BY ord) AS items
                       FROM page WHERE ord <= $25 GROUP BY 1) p ON true
 ORDER BY p.piece
-- parameters: [null,7,"E","pole","-infinity",1000,7,"E","pole","-infinity",1000,6000,"T","pole","-infinity",6,"T",6,6,"T","pole","T",1001,1000,1000]
