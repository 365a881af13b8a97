-- The webhook claim keeps one plan per connection again, now that no plan it could keep
-- is a bad one.
--
-- 0103 planned the claim on every call (force_custom_plan) because a plan kept from an
-- empty table checked each candidate's predecessors by a sequential scan, and one claim
-- over a burst of 10,000 deliveries then ran for 40 s. Since 0103 and 0104 the function
-- also turns sequential and bitmap scans off, and its statement probes the predecessors
-- with OFFSET 0, so the only plans left are the index walks the claim was written for
-- (the partner's ready range in order, the open-key probe, primary keys for the joins),
-- whatever the statistics said when the plan was made. Planning the recursive statement
-- was most of a claim's cost: measured on a 2-core machine over 10,000 due deliveries,
-- claims of 16, the database spent 232-265 µs of CPU per delivery claimed and settled
-- with a plan per call, 90-114 µs with the plan kept (the claim alone 199-252 µs of wall
-- time per delivery, against 65-90 µs). test/events/claim.test.ts keeps the 40 s case:
-- the plan is made on an empty table, then a backlog arrives, and no claim may scan the
-- table.
ALTER FUNCTION lumen_claim_webhook_deliveries(int, int, int, uuid[], int[], text)
  SET plan_cache_mode = force_generic_plan;
