-- The horizon a page of a walk was read at, kept with the page's checkpoint. A horizon
-- stays valid for every later snapshot of the same server, while a later snapshot's own
-- can be lower (held back to the start of a transaction that began before the walk and
-- took its id only after the page before): the walk's next page reads at no lower
-- horizon than this on the primary (src/db/repositories/city-data/read-walk.repository.ts),
-- so it does not end short of where the walk already stood. Null in checkpoints kept
-- before it: such a page reads at its own horizon, as before.
ALTER TABLE city_read_checkpoint ADD COLUMN read_horizon timestamptz;
