"""References to table states: snapshots, tags, branches, consumers, statistics."""
