"""Table indexes: deletion vectors, the dynamic-bucket hash index, bucket assignment."""
