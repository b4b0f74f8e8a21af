"""The store's SQL, written once for every SQL backend: each concern is a mixin over
:class:`~kenning.store.sql.database.SqlDatabase`, and a backend gives its connections, its
:class:`~kenning.store.sql.dialect.Dialect` and its statements across tenants
(:class:`~kenning.store.sql.cross.CrossTenant`). Backends differ in SQL, never in rules."""
