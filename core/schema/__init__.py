"""Table schemas and options: the TableSchema model, SchemaManager and the option table."""
