"""Storage access: FileIO over local and object stores, and every path of a table's layout."""
