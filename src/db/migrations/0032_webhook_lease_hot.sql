-- The claim counts a partner's leases from the pump's own bookkeeping (the leases the
-- claiming process holds), no longer from the table. The index 0017 added for that
-- count had `lease_until` in its predicate, so taking a lease (and clearing it at the
-- record) changed an indexed column: no update of a lease was HOT any more, and each
-- claim wrote a new entry into every index of webhook_delivery for every row it leased.
-- Without it the lease update stays on its page again (fillfactor 70, 0012).
DROP INDEX IF EXISTS webhook_delivery_leased_idx;
