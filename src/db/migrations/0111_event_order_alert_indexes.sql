-- The events of one service order and of one alert, by index. The order page's
-- timeline and "events sent" table and the alert page's timeline read them by
-- service_order_id and alert_id, which no index led with (event_alert_note_idx of
-- 0028 holds only events with a note): each page view read the whole event table,
-- a cost that grows with every event a city has ever sent.
CREATE INDEX event_service_order_idx ON event (service_order_id) WHERE service_order_id IS NOT NULL;
CREATE INDEX event_alert_idx ON event (alert_id);
