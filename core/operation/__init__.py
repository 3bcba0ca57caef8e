"""Operations over a table: scan, read, write, commit, expire, orphans, rollback, ..."""
