"""The LSM tree of primary-key tables: levels, sorted runs, compaction picking and rewriting;
the merge engines' merge functions and field aggregators."""
