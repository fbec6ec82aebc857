-- Dagster's storage beside the fleet store (POSTGRES_DB): two databases, one server.
CREATE DATABASE dagster OWNER fleet;
