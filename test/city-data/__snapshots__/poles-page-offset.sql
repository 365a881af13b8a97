WITH page AS MATERIALIZED (SELECT row_number() OVER (ORDER BY k.updated_at, k.id) AS ord, k.updated_at AS u, k.id, p.list_head || coalesce(t.list_item, 'null') || '}' AS item
      FROM (SELECT x.id, x.updated_at FROM "pole" x WHERE "x"."tenant_id" = $1 AND "x"."updated_at" < $2::timestamptz AND ("x"."updated_at", "x"."id") > ((SELECT $3::timestamptz), (SELECT $4::uuid))
             ORDER BY x.updated_at, x.id OFFSET $5 LIMIT $6) k
      JOIN "pole" p ON p.id = k.id LEFT JOIN telegestor t ON t.pole_id = p.id
     ORDER BY k.updated_at, k.id),
     n AS MATERIALIZED (SELECT (SELECT coalesce(sum(row_count), 0) FROM city_data_count WHERE tenant_id = $7 AND resource = $8)::bigint AS rows, (SELECT count(*) FROM "pole" WHERE tenant_id = $9 AND updated_at >= $10::timestamptz AND updated_at <= 'infinity') AS tail_now,
                               (SELECT count(*) FROM "pole" WHERE tenant_id = $11 AND updated_at >= $12::timestamptz AND updated_at <= 'infinity') AS tail_rank, NULL::bigint AS tail_cache),
     m AS MATERIALIZED (SELECT NULL::bigint AS mid FROM n)
SELECT p.items,
       (SELECT count(*) FROM page WHERE ord <= $13) AS fetched,
       l.u AS last_u, l.id AS last_id,
       n.rows, n.tail_now, n.tail_rank, n.tail_cache, m.mid, NULL::bigint AS low,
       NULL::text AS h
  FROM n CROSS JOIN m
  LEFT JOIN LATERAL (SELECT to_char(u AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS u, id
                       FROM page WHERE ord <= $14 ORDER BY ord DESC LIMIT 1) l ON true
  LEFT JOIN LATERAL (SELECT (ord - 1) / 64 AS piece,
                            CASE WHEN (ord - 1) / 64 > 0 THEN ',' ELSE '' END || string_agg(item, ',' ORDER BY ord) AS items
                       FROM page WHERE ord <= $15 GROUP BY 1) p ON true
 ORDER BY p.piece
-- parameters: ["T","2026-03-14T12:05:00.000000Z","2026-03-14T12:01:00.123456Z","I",3000,1001,"T","pole","T","2026-03-14T12:05:00.000000Z","T","2026-03-14T12:02:00.000000Z",1001,1000,1000]
