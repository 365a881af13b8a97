INSERT INTO tenant_counter AS c (tenant_id, name, year, value)
    SELECT $1::uuid, n.name, n.year, 1
      FROM (VALUES (1, 'alert', 0, $2::boolean), (2, 'service_order', $3::integer, $4::boolean)) AS n(ord, name, year, wanted)
     WHERE n.wanted
     ORDER BY n.ord
    ON CONFLICT (tenant_id, name, year) DO UPDATE SET value = c.value + 1
    RETURNING c.name, c.value, set_config('synchronous_commit', 'off', true) AS commit_mode
-- parameters: ["T",true,2026,true]
