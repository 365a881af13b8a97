SELECT n.name, lumen_take_number($1::uuid, n.name, n.year) AS value, set_config('synchronous_commit', 'off', true) AS commit_mode
      FROM (VALUES (1, 'alert', 0, $2::boolean), (2, 'service_order', $3::integer, $4::boolean)) AS n(ord, name, year, wanted)
     WHERE n.wanted
     ORDER BY n.ord
-- parameters: ["T",true,2026,true]
