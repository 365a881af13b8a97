-- The webhook claim (0099) planned once per connection and kept the plan. A plan made
-- while webhook_delivery was empty or never analysed checked each candidate's
-- predecessors (the NOT EXISTS on the partner's ordering key) by a sequential scan of
-- the table: with a partner at its in-flight limit, whose candidates the claim must all
-- pass over, one claim over 10,000 due deliveries ran for more than 40 s, and the
-- partner's deliveries went at the pace of the 2 s poll (seen in a full bench run, in a
-- server that had been up for the earlier rows). Planned again on each call, with the
-- table's size as it is then (a claim runs once per batch of deliveries, so planning is
-- cheap beside it), and never by a sequential scan: every part of the claim has its
-- index (the ready index in order, the open-key index for the predecessors, primary keys
-- for the joins).
ALTER FUNCTION lumen_claim_webhook_deliveries(int, int, int, uuid[], int[], text)
  SET plan_cache_mode = force_custom_plan;
ALTER FUNCTION lumen_claim_webhook_deliveries(int, int, int, uuid[], int[], text)
  SET enable_seqscan = off;
