-- A partner's reason code may carry a description (what the partner means by it, in
-- the city's words), kept with its mapping and shown in the reason-mapping table so an
-- operator who maps POSTE_CAIDO knows what the partner's operators pick it for.
ALTER TABLE reason_mapping ADD COLUMN description text CHECK (description IS NULL OR length(description) BETWEEN 1 AND 500);
