-- Runs once, when the shared server's data volume is first initialised: one database per bot.
CREATE DATABASE clarigate_alpha OWNER clarigate;
CREATE DATABASE clarigate_beta OWNER clarigate;
