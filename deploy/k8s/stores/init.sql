-- Runs once, when the data volume is first initialised. The database "clarigate" (POSTGRES_DB)
-- already exists; a setup with several bots replaces this file with one database per bot.
SELECT 1;
