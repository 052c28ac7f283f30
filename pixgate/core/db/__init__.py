"""The database: the asyncpg pool, the embedded server, migrations and the versioned SQL
function files."""
