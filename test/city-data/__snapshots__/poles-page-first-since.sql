WITH page AS MATERIALIZED (SELECT row_number() OVER (ORDER BY p.updated_at, p.id) AS ord, p.updated_at AS u, p.id, p.list_head || coalesce(t.list_item, 'null') || '}' AS item
      FROM "pole" p LEFT JOIN telegestor t ON t.pole_id = p.id
     WHERE "p"."tenant_id" = $1 AND "p"."updated_at" < $2::timestamptz AND "p"."updated_at" >= $3::timestamptz
     ORDER BY p.updated_at, p.id
     LIMIT 501),
     n AS MATERIALIZED (SELECT (SELECT coalesce(sum(row_count), 0) FROM city_data_count WHERE tenant_id = $4 AND resource = $5)::bigint AS rows, (SELECT count(*) FROM "pole" WHERE tenant_id = $6 AND updated_at >= $7::timestamptz AND updated_at <= 'infinity') AS tail_now,
                               NULL::bigint AS tail_rank, NULL::bigint AS tail_cache),
     m AS MATERIALIZED (SELECT (SELECT count(*) FROM (SELECT 1 FROM "pole" WHERE tenant_id = $8 AND updated_at >= $9::timestamptz AND updated_at < $10::timestamptz ORDER BY updated_at LIMIT (SELECT rows / 2 + 1 FROM n)) x) AS mid FROM n)
SELECT p.items,
       (SELECT count(*) FROM page WHERE ord <= $11) AS fetched,
       l.u AS last_u, l.id AS last_id,
       n.rows, n.tail_now, n.tail_rank, n.tail_cache, m.mid, CASE WHEN m.mid > n.rows / 2 THEN (SELECT count(*) FROM (SELECT 1 FROM "pole" WHERE tenant_id = $12 AND updated_at < $13::timestamptz) x) END AS low,
       NULL::text AS h
  FROM n CROSS JOIN m
  LEFT JOIN LATERAL (SELECT to_char(u AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS u, id
                       FROM page WHERE ord <= $14 ORDER BY ord DESC LIMIT 1) l ON true
  LEFT JOIN LATERAL (SELECT (ord - 1) / 64 AS piece,
                            CASE WHEN (ord - 1) / 64 > 0 THEN ',' ELSE '' END || string_agg(item, ',' ORDER BY ord) AS items
                       FROM page WHERE ord <= $15 GROUP BY 1) p ON true
 ORDER BY p.piece
-- parameters: ["T","2026-03-14T12:05:00.000000Z","2026-03-14T12:00:00.000000Z","T","pole","T","2026-03-14T12:05:00.000000Z","T","2026-03-14T12:00:00.000000Z","2026-03-14T12:05:00.000000Z",501,"T","2026-03-14T12:00:00.000000Z",500,500]
