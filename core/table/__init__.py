"""The table as a whole: FileStoreTable, the filesystem catalog, table identifiers."""
