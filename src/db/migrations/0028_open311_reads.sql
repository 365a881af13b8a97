-- Open311 reads (GET requests): a partner's alerts newest first, and for each the
-- operator's latest note, which is the note of the latest of its events that carries one.
-- Without these, each listed request would scan the partner's whole event history.
CREATE INDEX alert_partner_requested_idx ON alert (external_system_id, requested_at DESC);
CREATE INDEX event_alert_note_idx ON event (alert_id, occurred_at DESC) WHERE payload ? 'note';
