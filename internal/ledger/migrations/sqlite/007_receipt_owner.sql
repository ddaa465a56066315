-- One provider record proves one effect; see the PostgreSQL migration for
-- why the index exists and why HTTP receipts are left out.
CREATE UNIQUE INDEX effects_receipt_provider_id_key
    ON effects (json_extract(receipt, '$.provider'), json_extract(receipt, '$.id'))
    WHERE receipt IS NOT NULL AND json_extract(receipt, '$.provider') NOT LIKE 'http:%';
