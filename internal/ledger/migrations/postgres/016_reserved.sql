-- Placeholder holding version 016's place, which another change takes:
-- when that migration lands, this file is replaced by it.
SELECT 1;
